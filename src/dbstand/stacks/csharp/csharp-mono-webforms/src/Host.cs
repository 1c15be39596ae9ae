// dbstand's host for ASP.NET Web Forms on Mono.
//
// Debian 12's XSP 4 does not start under its Mono 6.8 and mod_mono needs XSP, so
// this small program plays the web server's part: it asks System.Web for an
// application domain (ApplicationHost.CreateApplicationHost), opens a
// System.Net.HttpListener on 127.0.0.1 inside that domain and hands every request
// to HttpRuntime.ProcessRequest through a SimpleWorkerRequest subclass. The pages,
// the static file, OutputCache and the rest of the pipeline are System.Web's own.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Reflection;
using System.Text;
using System.Threading;
using System.Web;
using System.Web.Hosting;

namespace Dbstand.MonoHost
{
    public static class Program
    {
        public static int Main(string[] args)
        {
            if (args.Length != 1)
            {
                Console.Error.WriteLine("usage: DbstandHost.exe APP_DIR");
                return 2;
            }
            string appDir = Path.GetFullPath(args[0]);
            string host = Env("DBSTAND_HOST", "127.0.0.1");
            int port = int.Parse(Env("DBSTAND_PORT", ""), CultureInfo.InvariantCulture);
            int workers = Math.Max(1, int.Parse(Env("DBSTAND_WORKERS", Environment.ProcessorCount.ToString(CultureInfo.InvariantCulture)), CultureInfo.InvariantCulture));
            string logFile = Env("DBSTAND_LOGGING", "0") == "1" ? Env("DBSTAND_LOG_FILE", "") : "";

            var bridge = (Bridge)ApplicationHost.CreateApplicationHost(typeof(Bridge), "/", appDir);
            try
            {
                // Runs in the ASP.NET domain and returns only when the listener stops.
                bridge.Serve(host, port, workers, logFile);
            }
            catch (AppDomainUnloadedException)
            {
                Console.Error.WriteLine("dbstand-mono-host: the ASP.NET application domain was unloaded");
                return 1;
            }
            return 0;
        }

        static string Env(string name, string fallback)
        {
            string value = Environment.GetEnvironmentVariable(name);
            return string.IsNullOrEmpty(value) ? fallback : value;
        }
    }

    /// Lives in the ASP.NET application domain, so requests never cross domains.
    public sealed class Bridge : MarshalByRefObject
    {
        // Extensionless paths of the webtech workload mapped to the application's files.
        static readonly Dictionary<string, string> Routes = new Dictionary<string, string>(StringComparer.Ordinal)
        {
            { "/file", "file.html" },
            { "/hello", "hello.aspx" },
            { "/loop", "loop.aspx" },
            { "/big", "big.aspx" },
            { "/db", "db.aspx" },
            { "/cache", "cache.aspx" },
            { "/json", "json.aspx" },
            { "/plaintext", "plaintext.aspx" },
        };

        // Mono's HttpListener sends the headers with the first 16 KiB of a body and
        // the rest in a second write; with Nagle on, that tail waits for the client's
        // delayed ACK (about 40 ms per 64 KiB answer). The listener has no NoDelay
        // setting, so the host sets TCP_NODELAY on each connection's socket, found
        // through Mono's private fields (as nginx's tcp_nodelay does for its own).
        static readonly FieldInfo ConnectionField =
            typeof(HttpListenerContext).GetField("cnc", BindingFlags.NonPublic | BindingFlags.Instance);
        static readonly FieldInfo SocketField = ConnectionField == null ? null :
            ConnectionField.FieldType.GetField("sock", BindingFlags.NonPublic | BindingFlags.Instance);

        HttpListener listener;
        AccessLog log;

        public override object InitializeLifetimeService()
        {
            return null; // the host holds this object for the life of the process
        }

        public void Serve(string host, int port, int workers, string logFile)
        {
            if (logFile.Length > 0)
                log = new AccessLog(logFile);
            if (SocketField == null)
                Console.Error.WriteLine("dbstand-mono-host: cannot reach the connection sockets, TCP_NODELAY stays off");
            listener = new HttpListener();
            listener.IgnoreWriteExceptions = true;
            listener.Prefixes.Add(string.Format(CultureInfo.InvariantCulture, "http://{0}:{1}/", host, port));
            listener.Start();
            Console.Error.WriteLine("dbstand-mono-host: listening on http://{0}:{1}/ with {2} worker threads, app {3}",
                host, port, workers, HttpRuntime.AppDomainAppPath);

            var threads = new Thread[workers];
            for (int i = 0; i < workers; i++)
            {
                threads[i] = new Thread(Loop) { IsBackground = true, Name = "dbstand-worker-" + i };
                threads[i].Start();
            }
            foreach (Thread t in threads)
                t.Join();
        }

        void Loop()
        {
            while (true)
            {
                HttpListenerContext ctx;
                try
                {
                    ctx = listener.GetContext();
                }
                catch (Exception e) when (e is HttpListenerException || e is ObjectDisposedException || e is InvalidOperationException)
                {
                    return;
                }
                try
                {
                    Handle(ctx);
                }
                catch (Exception e)
                {
                    Console.Error.WriteLine("dbstand-mono-host: request failed: {0}", e);
                    try { ctx.Response.Abort(); } catch (Exception) { }
                }
            }
        }

        static void SetNoDelay(HttpListenerContext ctx)
        {
            if (SocketField == null)
                return;
            try
            {
                var sock = SocketField.GetValue(ConnectionField.GetValue(ctx)) as Socket;
                if (sock != null)
                    sock.NoDelay = true;
            }
            catch (Exception)
            {
                // a connection the client already closed: nothing to tune
            }
        }

        void Handle(HttpListenerContext ctx)
        {
            SetNoDelay(ctx);
            string raw = ctx.Request.RawUrl ?? "/";
            int q = raw.IndexOf('?');
            string path = q < 0 ? raw : raw.Substring(0, q);
            string query = q < 0 ? "" : raw.Substring(q + 1);
            if (path.Length == 0 || path[0] != '/' || path.IndexOf("..", StringComparison.Ordinal) >= 0 || path.IndexOf('\\') >= 0)
            {
                ctx.Response.StatusCode = 400;
                ctx.Response.ContentLength64 = 0;
                ctx.Response.Close();
                return;
            }
            string page;
            if (!Routes.TryGetValue(path, out page))
                page = path.Substring(1);

            var wr = new ListenerWorkerRequest(page, query, ctx, log);
            HttpRuntime.ProcessRequest(wr);
            // ProcessRequest may queue the request; wait so that each worker thread
            // carries one request at a time (DBSTAND_WORKERS is the concurrency).
            wr.WaitForEnd(TimeSpan.FromSeconds(120));
        }
    }

    /// Carries one HttpListener request through System.Web and buffers the answer
    /// so that it leaves with a Content-Length (keep-alive without chunking).
    public sealed class ListenerWorkerRequest : SimpleWorkerRequest
    {
        readonly HttpListenerRequest req;
        readonly HttpListenerResponse resp;
        readonly AccessLog log;
        readonly MemoryStream body = new MemoryStream();
        readonly ManualResetEventSlim ended = new ManualResetEventSlim(false);
        int status = 200;
        string statusText = "OK";
        bool completed;

        public ListenerWorkerRequest(string page, string query, HttpListenerContext ctx, AccessLog log)
            : base(page, query, TextWriter.Null)
        {
            req = ctx.Request;
            resp = ctx.Response;
            this.log = log;
        }

        public void WaitForEnd(TimeSpan timeout)
        {
            if (!ended.Wait(timeout))
                Console.Error.WriteLine("dbstand-mono-host: no EndOfRequest for {0} after {1}", req.RawUrl, timeout);
        }

        public override string GetHttpVerbName() { return req.HttpMethod; }

        public override string GetHttpVersion()
        {
            return "HTTP/" + req.ProtocolVersion.ToString(2);
        }

        public override string GetProtocol() { return "http"; }

        public override string GetLocalAddress() { return req.LocalEndPoint.Address.ToString(); }

        public override int GetLocalPort() { return req.LocalEndPoint.Port; }

        public override string GetRemoteAddress() { return req.RemoteEndPoint.Address.ToString(); }

        public override int GetRemotePort() { return req.RemoteEndPoint.Port; }

        public override string GetKnownRequestHeader(int index)
        {
            return req.Headers[GetKnownRequestHeaderName(index)];
        }

        public override string GetUnknownRequestHeader(string name)
        {
            return req.Headers[name];
        }

        public override string[][] GetUnknownRequestHeaders()
        {
            var list = new List<string[]>();
            foreach (string key in req.Headers.AllKeys)
            {
                if (GetKnownRequestHeaderIndex(key) < 0)
                    list.Add(new[] { key, req.Headers[key] });
            }
            return list.ToArray();
        }

        public override bool IsClientConnected() { return true; }

        public override bool HeadersSent() { return completed; }

        // StaticFileHandler flushes a final time itself and the pipeline once more at
        // its end: whatever arrives after the answer has left is dropped.
        public override void CloseConnection()
        {
            if (!completed)
                resp.KeepAlive = false;
        }

        public override void SendStatus(int statusCode, string statusDescription)
        {
            if (completed)
                return;
            status = statusCode;
            statusText = statusDescription;
        }

        public override void SendKnownResponseHeader(int index, string value)
        {
            AddHeader(GetKnownResponseHeaderName(index), value);
        }

        public override void SendUnknownResponseHeader(string name, string value)
        {
            AddHeader(name, value);
        }

        void AddHeader(string name, string value)
        {
            if (completed)
                return;
            switch (name.ToLowerInvariant())
            {
                case "content-length":
                case "transfer-encoding":
                case "keep-alive":
                    return; // the listener frames the body itself
                case "content-type":
                    resp.ContentType = value;
                    return;
                case "connection":
                    if (string.Equals(value, "close", StringComparison.OrdinalIgnoreCase))
                        resp.KeepAlive = false;
                    return;
                default:
                    resp.AppendHeader(name, value);
                    return;
            }
        }

        public override void SendResponseFromMemory(byte[] data, int length)
        {
            if (completed)
                return;
            body.Write(data, 0, length);
        }

        public override void SendResponseFromFile(string filename, long offset, long length)
        {
            if (completed)
                return;
            using (var fs = new FileStream(filename, FileMode.Open, FileAccess.Read, FileShare.Read))
                CopySpan(fs, offset, length);
        }

        public override void SendResponseFromFile(IntPtr handle, long offset, long length)
        {
            if (completed)
                return;
            var safe = new Microsoft.Win32.SafeHandles.SafeFileHandle(handle, false);
            using (var fs = new FileStream(safe, FileAccess.Read))
                CopySpan(fs, offset, length);
        }

        void CopySpan(Stream fs, long offset, long length)
        {
            if (completed)
                return;
            if (length < 0)
                length = fs.Length - offset;
            fs.Seek(offset, SeekOrigin.Begin);
            var buf = new byte[Math.Min(length, 65536L)];
            while (length > 0)
            {
                int n = fs.Read(buf, 0, (int)Math.Min(buf.Length, length));
                if (n <= 0)
                    break;
                body.Write(buf, 0, n);
                length -= n;
            }
        }

        public override void FlushResponse(bool finalFlush)
        {
            if (finalFlush)
                Complete();
        }

        public override void EndOfRequest()
        {
            try
            {
                Complete();
            }
            finally
            {
                ended.Set();
            }
        }

        void Complete()
        {
            if (completed)
                return;
            completed = true;
            long length = body.Length;
            // The log line is made before the answer leaves: once the client has it,
            // it may close the connection and the socket's endpoints are gone.
            string logLine = null;
            if (log != null)
            {
                try { logLine = AccessLog.Format(req, status, length); }
                catch (Exception e) { Console.Error.WriteLine("dbstand-mono-host: log line failed: {0}", e.Message); }
            }
            try
            {
                resp.StatusCode = status;
                if (!string.IsNullOrEmpty(statusText))
                    resp.StatusDescription = statusText;
                resp.ContentLength64 = length;
                if (length > 0 && req.HttpMethod != "HEAD")
                    resp.OutputStream.Write(body.GetBuffer(), 0, (int)length);
                resp.Close();
            }
            catch (Exception e)
            {
                Console.Error.WriteLine("dbstand-mono-host: sending {0} failed: {1}", req.RawUrl, e.Message);
                try { resp.Abort(); } catch (Exception) { }
            }
            if (logLine != null)
                log.Write(logLine);
        }
    }

    /// Common Log Format lines, one write per request, only when logging is on.
    public sealed class AccessLog
    {
        readonly StreamWriter writer;
        readonly object gate = new object();

        public AccessLog(string path)
        {
            var fs = new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite);
            writer = new StreamWriter(fs, new UTF8Encoding(false)) { AutoFlush = true };
        }

        public static string Format(HttpListenerRequest req, int status, long bytes)
        {
            return string.Format(CultureInfo.InvariantCulture,
                "{0} - - [{1:dd/MMM/yyyy:HH:mm:ss} +0000] \"{2} {3} HTTP/{4}\" {5} {6} \"{7}\"",
                req.RemoteEndPoint.Address, DateTime.UtcNow, req.HttpMethod, req.RawUrl,
                req.ProtocolVersion.ToString(2), status, bytes, req.UserAgent ?? "-");
        }

        public void Write(string line)
        {
            lock (gate)
                writer.WriteLine(line);
        }
    }
}
