<?php
// The /db page kept 15 s in APCu, which every worker of this server shares: while
// the entry is fresh no query reaches the database.
require __DIR__ . '/lib.php';

$now = time();
$entry = apcu_fetch('dbstand_cache_page');
if ($entry === false || $entry[0] <= $now) {
    $entry = [$now + 15, dbstand_db_page()];
    apcu_store('dbstand_cache_page', $entry, 15);
}
header('Expires: ' . gmdate('D, d M Y H:i:s', $now + 15) . ' GMT');
header('Cache-Control: max-age=15');
echo $entry[1];
