<?php
echo 'Hello, World';
