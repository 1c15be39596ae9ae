package DBstand::ModPerl;

# The mod_perl 2 response handler for dbstand's webtech paths. Apache loads this
# module (and DBI, and the /big block) once in its parent process before forking;
# each child then keeps its own database connection.

use strict;
use warnings;
use Apache2::RequestRec ();
use Apache2::RequestIO ();
use Apache2::RequestUtil ();
use Apache2::Response ();
use APR::Table ();
use Apache2::Const -compile => qw(OK NOT_FOUND);
use JSON::XS ();
use DBstand::WebTech ();

DBstand::WebTech::preload();

my %ROUTES = (
    '/hello'     => \&hello,
    '/loop'      => \&loop,
    '/big'       => \&big,
    '/db'        => \&db,
    '/cache'     => \&cache,
    '/json'      => \&json,
    '/plaintext' => \&plaintext,
);

# Sends a whole body (the third argument, used in place: /big is not copied) with
# its length, so that keep-alive needs no chunking.
sub _send {
    my ($r, $type) = @_;
    $r->content_type($type);
    $r->set_content_length(length $_[2]);
    $r->print($_[2]);
    return Apache2::Const::OK;
}

sub handler {
    my ($r) = @_;
    my $route = $ROUTES{$r->uri} or return Apache2::Const::NOT_FOUND;
    return $route->($r);
}

sub hello {
    my ($r) = @_;
    return _send($r, 'text/html', 'Hello, World');
}

# 5,462 separate writes of 12 bytes (65,544 bytes).
sub loop {
    my ($r) = @_;
    $r->content_type('text/html');
    $r->print('Hello, World') for 1 .. 5462;
    return Apache2::Const::OK;
}

sub big {
    my ($r) = @_;
    return _send($r, 'text/plain', $DBstand::WebTech::BIG);
}

sub _configure {
    my ($r) = @_;
    DBstand::WebTech::configure($r->dir_config('DBstandConfig'))
        unless DBstand::WebTech::configured();
    return;
}

sub db {
    my ($r) = @_;
    _configure($r);
    return _send($r, 'text/html', DBstand::WebTech::db_page());
}

sub cache {
    my ($r) = @_;
    _configure($r);
    my $page = DBstand::WebTech::cached_page();
    $r->headers_out->set('Expires' => DBstand::WebTech::http_date(time + 15));
    $r->headers_out->set('Cache-Control' => 'max-age=15');
    return _send($r, 'text/html', $page);
}

sub json {
    my ($r) = @_;
    return _send($r, 'application/json', JSON::XS::encode_json({ message => 'Hello, World!' }));
}

sub plaintext {
    my ($r) = @_;
    return _send($r, 'text/plain', 'Hello, World!');
}

1;
