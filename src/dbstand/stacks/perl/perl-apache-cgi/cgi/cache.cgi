#!/usr/bin/perl
# /cache: the /db page from the cache file in the work dir while it is fresh (no
# database connection at all), else made anew and stored for 15 s.
use strict;
use warnings;
use DBstand::WebTech ();

DBstand::WebTech::configure($ENV{DBSTAND_DB_CONFIG});
my $page = DBstand::WebTech::cached_page();
print "Content-Type: text/html\n",
    'Expires: ', DBstand::WebTech::http_date(time + 15), "\n",
    "Cache-Control: max-age=15\n",
    'Content-Length: ', length($page), "\n\n", $page;
