<?php
require __DIR__ . '/lib.php';
echo dbstand_db_page();
