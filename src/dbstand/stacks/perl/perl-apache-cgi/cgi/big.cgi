#!/usr/bin/perl
# /big: a CGI program starts for every request, so "built once at start-up" means
# built once by this process, then sent whole.
use strict;
use warnings;

my $big = '0123456789abcdef' x 4096;
print "Content-Type: text/plain\nContent-Length: ", length($big), "\n\n", $big;
