<?php
// The /db page, shared by db.php and cache.php. Each worker process keeps one
// persistent PDO connection (the mysql_pconnect habit of mod_php sites), so a
// request pays for its two SELECTs and not for a login.

declare(strict_types=1);

function dbstand_config(): array
{
    // config.php is written by start.sh into the work dir; opcache keeps it compiled.
    static $config = null;
    if ($config === null) {
        $config = require __DIR__ . '/config.php';
    }
    return $config;
}

function dbstand_pdo(): PDO
{
    $c = dbstand_config();
    $dsn = 'mysql:host=' . $c['host'] . ';port=' . $c['port'] . ';dbname=' . $c['name'];
    return new PDO($dsn, $c['user'], $c['password'], [
        PDO::ATTR_PERSISTENT => true,
        PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
    ]);
}

function dbstand_db_page(): string
{
    $table = dbstand_config()['table'];
    $pdo = dbstand_pdo();
    $statement = $pdo->prepare('SELECT id, randomnumber FROM ' . $table . ' WHERE id = ?');
    $statement->execute([mt_rand(1, 10000)]);
    $row = $statement->fetch(PDO::FETCH_NUM);
    $statement->closeCursor();
    $count = $pdo->query('SELECT COUNT(*) FROM ' . $table)->fetchColumn();
    return "<!DOCTYPE html>\n<html><head><title>db</title></head><body>"
        . '<p>world id=' . $row[0] . ' randomnumber=' . $row[1] . '</p>'
        . '<p>count=' . $count . "</p></body></html>\n";
}
