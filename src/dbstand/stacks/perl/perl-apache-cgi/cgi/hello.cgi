#!/usr/bin/perl
# /hello as a CGI program: one process per request, as in 2002.
use strict;
use warnings;

print "Content-Type: text/html\n\n", 'Hello, World';
