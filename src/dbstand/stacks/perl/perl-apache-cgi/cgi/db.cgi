#!/usr/bin/perl
# /db: connect, two SELECTs, render (DBI + DBD::mysql). The settings file's path
# comes from Apache (SetEnv); the lib folder from PERL5LIB.
use strict;
use warnings;
use DBstand::WebTech ();

DBstand::WebTech::configure($ENV{DBSTAND_DB_CONFIG});
my $page = DBstand::WebTech::db_page();
print "Content-Type: text/html\nContent-Length: ", length($page), "\n\n", $page;
