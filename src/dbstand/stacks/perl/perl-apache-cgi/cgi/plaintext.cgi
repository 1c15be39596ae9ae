#!/usr/bin/perl
use strict;
use warnings;

print "Content-Type: text/plain\n\n", 'Hello, World!';
