"""MariaDB and MySQL (one wire protocol): port 3306, managed MariaDB from Debian."""

from dbstand.targets.kinds import TargetKind

KIND = TargetKind(
    name="mysql", dialect="mysql", title="MySQL/MariaDB", schemes=("mysql", "mariadb"),
    default_port=3306,
    admin_stacks=("pymysql", "mysqlclient", "mysql-connector-python"),
    managed="dbstand.targets.mysql.managed:ManagedMariaDB",
    statements="com_counters",
    speaks_first=True, greeting="dbstand.targets.greeting:is_mysql",
    run_lock="dbstand.targets.mysql.lock:hold",
    paramstyle="format",
    default_stacks={"kv": ("pymysql",), "batch": ("pymysql", "mysqlclient"),
                    "python": ("pymysql",), "script": ("pymysql",)},
)
