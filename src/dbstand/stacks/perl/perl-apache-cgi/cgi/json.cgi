#!/usr/bin/perl
use strict;
use warnings;
use JSON::XS ();

my $body = JSON::XS::encode_json({ message => 'Hello, World!' });
print "Content-Type: application/json\nContent-Length: ", length($body), "\n\n", $body;
