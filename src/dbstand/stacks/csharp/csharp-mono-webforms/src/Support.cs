// Shared state of the Web Forms pages: the in-memory block of /big and the
// database access of /db and /cache (System.Data.Odbc over MariaDB's ODBC driver).
using System;
using System.Collections.Concurrent;
using System.Data.Odbc;
using System.Globalization;
using System.IO;
using System.Text;
using System.Text.RegularExpressions;

namespace Dbstand.WebForms
{
    /// The 65,536-byte block of /big, built once when the application starts.
    public static class BigBlock
    {
        static byte[] bytes;

        public static byte[] Bytes
        {
            get { return bytes ?? Build(); }
        }

        public static byte[] Build()
        {
            var sb = new StringBuilder(65536);
            for (int i = 0; i < 4096; i++)
                sb.Append("0123456789abcdef");
            bytes = Encoding.ASCII.GetBytes(sb.ToString());
            return bytes;
        }
    }

    /// The rendered /cache page and the moment it stops being fresh.
    public sealed class CachedPage
    {
        public readonly string Body;
        public readonly DateTime ExpiresUtc;

        public CachedPage(string body, DateTime expiresUtc)
        {
            Body = body;
            ExpiresUtc = expiresUtc;
        }

        public bool Fresh
        {
            get { return DateTime.UtcNow < ExpiresUtc; }
        }
    }

    /// One row of the world table and its count, as the db page renders them.
    public struct WorldRow
    {
        public int Id;
        public int RandomNumber;
        public long Count;
    }

    /// A small pool of open ODBC connections: Mono's System.Data.Odbc has none of
    /// its own, and opening a MariaDB session per request would measure the login.
    public static class World
    {
        static readonly ConcurrentBag<OdbcConnection> Idle = new ConcurrentBag<OdbcConnection>();
        static readonly object ConfigGate = new object();
        static string connectionString;
        static string selectRow;
        static string selectCount;
        [ThreadStatic] static Random rng;

        static void Configure()
        {
            lock (ConfigGate)
            {
                if (connectionString != null)
                    return;
                string kind = Env("DBSTAND_DB_KIND");
                if (kind != "mysql")
                    throw new InvalidOperationException("DBSTAND_DB_KIND must be mysql, not '" + kind + "'");
                string prefix = Env("DBSTAND_PREFIX");
                if (prefix.Length == 0)
                    prefix = "dbstand_";
                if (!Regex.IsMatch(prefix, "^[A-Za-z0-9_]+$"))
                    throw new InvalidOperationException("DBSTAND_PREFIX is not a plain identifier");
                string passwordFile = Env("DBSTAND_DB_PASSWORD_FILE");
                string password = passwordFile.Length > 0 ? File.ReadAllText(passwordFile).TrimEnd('\r', '\n') : "";
                string driver = Env("DBSTAND_ODBC_DRIVER");
                if (driver.Length == 0)
                    throw new InvalidOperationException("DBSTAND_ODBC_DRIVER (MariaDB's libmaodbc.so) is not set");
                selectRow = "SELECT id, randomnumber FROM " + prefix + "world WHERE id = ?";
                selectCount = "SELECT COUNT(*) FROM " + prefix + "world";
                connectionString = string.Format(CultureInfo.InvariantCulture,
                    "Driver={0};Server={1};Port={2};Database={3};Uid={4};Pwd={5}",
                    Braced(driver), Braced(Env("DBSTAND_DB_HOST")), Env("DBSTAND_DB_PORT"),
                    Braced(Env("DBSTAND_DB_NAME")), Braced(Env("DBSTAND_DB_USER")), Braced(password));
            }
        }

        /// ODBC quoting: braces keep ';' and '=' inside a value.
        static string Braced(string value)
        {
            return "{" + value.Replace("}", "}}") + "}";
        }

        static string Env(string name)
        {
            return Environment.GetEnvironmentVariable(name) ?? "";
        }

        static OdbcConnection Take()
        {
            OdbcConnection conn;
            if (Idle.TryTake(out conn))
                return conn;
            if (connectionString == null)
                Configure();
            conn = new OdbcConnection(connectionString);
            conn.Open();
            return conn;
        }

        /// The two SELECTs of the db page: one row by a random id, then the count.
        public static WorldRow Query()
        {
            if (rng == null)
                rng = new Random(Guid.NewGuid().GetHashCode());
            int id = rng.Next(1, 10001);
            var row = new WorldRow();
            OdbcConnection conn = Take();
            bool healthy = false;
            try
            {
                using (OdbcCommand cmd = conn.CreateCommand())
                {
                    cmd.CommandText = selectRow;
                    cmd.Parameters.Add("id", OdbcType.Int).Value = id;
                    using (OdbcDataReader r = cmd.ExecuteReader())
                    {
                        if (!r.Read())
                            throw new InvalidOperationException("no world row with id " + id);
                        row.Id = r.GetInt32(0);
                        row.RandomNumber = r.GetInt32(1);
                    }
                }
                using (OdbcCommand cmd = conn.CreateCommand())
                {
                    cmd.CommandText = selectCount;
                    row.Count = Convert.ToInt64(cmd.ExecuteScalar(), CultureInfo.InvariantCulture);
                }
                healthy = true;
            }
            finally
            {
                if (healthy)
                    Idle.Add(conn);
                else
                    conn.Dispose();
            }
            return row;
        }
    }
}
