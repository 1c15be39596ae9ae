<?php
// 5,462 separate writes of 12 bytes (65,544 bytes), as the study's loop test asks.
for ($i = 0; $i < 5462; $i++) {
    echo 'Hello, World';
}
