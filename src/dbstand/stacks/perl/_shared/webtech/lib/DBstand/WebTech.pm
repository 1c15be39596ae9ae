package DBstand::WebTech;

# The server-independent half of dbstand's Perl webtech stacks (mod_perl, CGI,
# Starman carry identical copies): the settings file start.sh writes, the /db page
# over DBI, the 15-second /cache page shared by every process through a file, and
# HTTP dates. Each process keeps one database connection, opened on first use so
# that a forking server never shares a socket between processes.

use strict;
use warnings;
use Fcntl qw(:flock);

# /big: 65,536 bytes, built once when the module is loaded (at server start-up
# for mod_perl and Starman, which load it before forking).
our $BIG = '0123456789abcdef' x 4096;

my %config;
my ($dbh, $dbh_pid, $rand_pid) = (undef, 0, 0);
my ($memo_until, $memo_body) = (0, undef);
my @DAYS = qw(Sun Mon Tue Wed Thu Fri Sat);
my @MONTHS = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);

# Reads the key=value settings file (host, port, name, user, password, table,
# cache_file); the password reaches the process only this way.
sub configure {
    my ($path) = @_;
    die "dbstand: no settings file given\n" unless defined $path && length $path;
    open my $fh, '<', $path or die "dbstand: cannot read $path: $!\n";
    while (my $line = <$fh>) {
        chomp $line;
        $config{$1} = $2 if $line =~ /\A(\w+)=(.*)\z/s;
    }
    close $fh;
    die "dbstand: $path names no table\n" unless ($config{table} // '') =~ /\A\w+\z/;
    return;
}

sub configured { return exists $config{table} }

# Loads DBI and the MySQL driver now, so that a forking server shares them with its
# children. Without it they load on first use (a CGI cache hit never loads them).
sub preload {
    require DBI;
    DBI->install_driver('mysql');
    return;
}

sub _dbh {
    return $dbh if $dbh && $dbh_pid == $$;
    require DBI;
    my $dsn = "DBI:mysql:database=$config{name};host=$config{host};port=$config{port}";
    $dbh = DBI->connect($dsn, $config{user}, $config{password},
                        { RaiseError => 1, PrintError => 0, AutoCommit => 1 });
    $dbh_pid = $$;
    return $dbh;
}

sub _query_page {
    my ($id) = @_;
    my $db = _dbh();
    my $sth = $db->prepare_cached("SELECT id, randomnumber FROM $config{table} WHERE id = ?");
    $sth->execute($id);
    my ($row_id, $number) = $sth->fetchrow_array;
    $sth->finish;
    my ($count) = $db->selectrow_array("SELECT COUNT(*) FROM $config{table}");
    return "<!DOCTYPE html>\n<html><head><title>db</title></head><body>"
        . "<p>world id=$row_id randomnumber=$number</p>"
        . "<p>count=$count</p></body></html>\n";
}

# The /db page: the row of a random id in 1..10000 and the row count, two SELECTs.
sub db_page {
    if ($rand_pid != $$) {    # children of a forking server must not share a seed
        srand();
        $rand_pid = $$;
    }
    my $id = 1 + int rand 10000;
    my $page = eval { _query_page($id) };
    return $page if defined $page;
    undef $dbh;               # a dropped connection: one retry on a fresh one
    return _query_page($id);
}

sub _read_cache_file {
    my ($now) = @_;
    open my $fh, '<', $config{cache_file} or return;
    local $/;
    my $data = <$fh>;
    close $fh;
    return unless defined $data && $data =~ /\A(\d+)\n/ && $1 > $now;
    return ($1, substr $data, $+[0]);
}

# The /cache page: the /db page made at most once per 15 s for all processes.
# A fresh copy comes from this process's memory, else from the cache file; only
# when both are stale does one process (under a lock) query the database.
sub cached_page {
    my $now = time;
    return $memo_body if defined $memo_body && $memo_until > $now;
    my ($until, $body) = _read_cache_file($now);
    unless (defined $body) {
        my $file = $config{cache_file};
        open my $lock, '>>', "$file.lock" or die "dbstand: cannot open $file.lock: $!\n";
        flock $lock, LOCK_EX or die "dbstand: cannot lock $file.lock: $!\n";
        ($until, $body) = _read_cache_file($now);    # another process may have won
        unless (defined $body) {
            ($until, $body) = ($now + 15, db_page());
            my $tmp = "$file.$$";
            open my $out, '>', $tmp or die "dbstand: cannot write $tmp: $!\n";
            print {$out} "$until\n", $body;
            close $out or die "dbstand: cannot write $tmp: $!\n";
            rename $tmp, $file or die "dbstand: cannot rename $tmp: $!\n";
        }
        close $lock;
    }
    ($memo_until, $memo_body) = ($until, $body);
    return $body;
}

# An RFC 9110 date (Expires), independent of the process's locale.
sub http_date {
    my ($epoch) = @_;
    my @t = gmtime $epoch;
    return sprintf '%s, %02d %s %04d %02d:%02d:%02d GMT',
        $DAYS[$t[6]], $t[3], $MONTHS[$t[4]], $t[5] + 1900, $t[2], $t[1], $t[0];
}

1;
