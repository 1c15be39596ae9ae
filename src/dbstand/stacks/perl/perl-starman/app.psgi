# dbstand's webtech paths as one PSGI application, run by Starman (preforking).
# Starman loads this file in its master before forking (--preload-app), so the
# /big block and the MySQL driver are made once and shared; every worker opens its
# own database connection on first use.

use strict;
use warnings;
use JSON::XS ();
use Plack::App::File ();
use Plack::Util ();
use DBstand::WebTech ();

my $static = $ENV{DBSTAND_STATIC_DIR} or die "DBSTAND_STATIC_DIR is not set\n";
DBstand::WebTech::configure($ENV{DBSTAND_DB_CONFIG}) if $ENV{DBSTAND_DB_CONFIG};
DBstand::WebTech::preload();

my $BIG = $DBstand::WebTech::BIG;
my $HTML = 'text/html; charset=utf-8';

sub whole {
    my ($type, $body, @headers) = @_;
    return [200, ['Content-Type' => $type, 'Content-Length' => length $body, @headers], [$body]];
}

my %routes = (
    # /file: Plack's own static file handler.
    '/file' => Plack::App::File->new(file => "$static/file.html")->to_app,
    '/hello' => sub { whole($HTML, 'Hello, World') },
    # /loop: 5,462 separate appends of 12 bytes to the response buffer, which
    # Starman then writes out (a PSGI body element per piece would cost a system
    # call each).
    '/loop' => sub {
        my $out = '';
        $out .= 'Hello, World' for 1 .. 5462;
        return whole($HTML, $out);
    },
    '/big' => sub { [200, ['Content-Type' => 'text/plain', 'Content-Length' => length $BIG], [$BIG]] },
    '/db' => sub { whole($HTML, DBstand::WebTech::db_page()) },
    '/cache' => sub {
        whole($HTML, DBstand::WebTech::cached_page(),
              'Expires' => DBstand::WebTech::http_date(time + 15),
              'Cache-Control' => 'max-age=15');
    },
    '/json' => sub { whole('application/json', JSON::XS::encode_json({ message => 'Hello, World!' })) },
    '/plaintext' => sub { whole('text/plain', 'Hello, World!') },
);

my $app = sub {
    my ($env) = @_;
    my $route = $routes{$env->{PATH_INFO}}
        or return [404, ['Content-Type' => 'text/plain', 'Content-Length' => 10], ["Not Found\n"]];
    return $route->($env);
};

# Starman adds Date but no Server header; every answer carries one.
my $with_server = sub {
    my ($env) = @_;
    return Plack::Util::response_cb($app->($env), sub {
        my ($res) = @_;
        Plack::Util::header_set($res->[1], 'Server', 'Starman')
            unless Plack::Util::header_exists($res->[1], 'Server');
        return;
    });
};

if (($ENV{DBSTAND_LOGGING} // '0') eq '1') {
    require Plack::Middleware::AccessLog;
    my $path = $ENV{DBSTAND_LOG_FILE} or die "DBSTAND_LOG_FILE is not set\n";
    open my $log, '>>', $path or die "cannot open $path: $!\n";
    $log->autoflush(1);    # one write per line, appended whole by every worker
    $with_server = Plack::Middleware::AccessLog->wrap(
        $with_server, format => 'combined', logger => sub { print {$log} @_ });
}

$with_server;
