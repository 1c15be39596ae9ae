#!/usr/bin/perl
# /loop: 5,462 separate writes of 12 bytes (65,544 bytes) to standard output.
use strict;
use warnings;

print "Content-Type: text/html\n\n";
print 'Hello, World' for 1 .. 5462;
