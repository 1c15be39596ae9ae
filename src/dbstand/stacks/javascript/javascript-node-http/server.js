'use strict';
// dbstand's webtech stack on Node.js's own `http` module (the stand-in for Resin's
// server-side JavaScript of the 2002 study). One primary process and
// DBSTAND_WORKERS workers through `cluster`; the primary also holds the /cache
// copy, so that every worker answers from the same one while it is fresh.

const cluster = require('node:cluster');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const mysql = require('mysql2/promise');

const CACHE_SECONDS = 15;
const LOOP_PIECES = 5462;
const SERVER = `Node.js/${process.version.slice(1)}`;

function env(name, fallback = '') {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : value;
}

if (cluster.isPrimary) {
  runPrimary();
} else {
  runWorker();
}

// --- primary: forks the workers, keeps the shared /cache copy --------------------
function runPrimary() {
  const workers = Math.max(1, parseInt(env('DBSTAND_WORKERS', '1'), 10) || 1);
  let stopping = false;

  // The /cache copy: {body, expires} (expires in ms since the epoch). One worker at a
  // time fills it; requests arriving meanwhile wait for that fill.
  let entry = null;
  let filler = null;          // id of the worker filling, or null
  const waiting = [];         // [{worker, ticket}]

  function reply(worker, ticket, answer) {
    if (worker.isConnected()) worker.send({ dbstand: 'cache', ticket, ...answer });
  }

  function nextFiller() {
    const next = waiting.shift();
    if (next) {
      filler = next.worker.id;
      reply(next.worker, next.ticket, { fill: true });
    } else {
      filler = null;
    }
  }

  function onMessage(worker, msg) {
    if (!msg || typeof msg !== 'object') return;
    if (msg.dbstand === 'cache-get') {
      if (entry && entry.expires > Date.now()) {
        reply(worker, msg.ticket, { body: entry.body, expires: entry.expires });
      } else if (filler !== null) {
        waiting.push({ worker, ticket: msg.ticket });
      } else {
        filler = worker.id;
        reply(worker, msg.ticket, { fill: true });
      }
    } else if (msg.dbstand === 'cache-put') {
      if (typeof msg.body === 'string') entry = { body: msg.body, expires: msg.expires };
      const served = waiting.splice(0, waiting.length);
      filler = null;
      if (entry && entry.expires > Date.now()) {
        for (const w of served) reply(w.worker, w.ticket, { body: entry.body, expires: entry.expires });
      } else {
        // the fill failed: the next waiter tries, the others keep waiting
        waiting.push(...served);
        nextFiller();
      }
    }
  }

  function fork() {
    const worker = cluster.fork();
    worker.on('message', (msg) => onMessage(worker, msg));
  }

  cluster.on('exit', (worker, code, signal) => {
    if (filler === worker.id) nextFiller();
    for (let i = waiting.length - 1; i >= 0; i--) {
      if (waiting[i].worker === worker) waiting.splice(i, 1);
    }
    if (stopping) return;
    console.error(`node-http: worker ${worker.process.pid} exited (${signal || code}), starting another`);
    fork();
  });

  function stop() {
    if (stopping) return;
    stopping = true;
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 2000).unref();
    const check = setInterval(() => {
      if (Object.keys(cluster.workers).length === 0) process.exit(0);
    }, 50);
    check.unref();
  }
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  for (let i = 0; i < workers; i++) fork();
  console.error(`node-http: primary ${process.pid}, ${workers} worker(s) on ` +
                `http://${env('DBSTAND_HOST', '127.0.0.1')}:${env('DBSTAND_PORT')}/`);
}

// --- worker: the HTTP server ------------------------------------------------------
function runWorker() {
  // Without its primary a worker has no reason to live.
  process.on('disconnect', () => process.exit(0));

  const staticDir = env('DBSTAND_STATIC_DIR', '.');
  const filePath = path.join(staticDir, 'file.html');
  // The /big block, built once at start-up: '0123456789abcdef' x 4096.
  const BIG = Buffer.from('0123456789abcdef'.repeat(4096), 'latin1');
  const HELLO = 'Hello, World';
  const db = openDatabase();
  const log = env('DBSTAND_LOGGING', '0') === '1' && env('DBSTAND_LOG_FILE')
    ? fs.createWriteStream(env('DBSTAND_LOG_FILE'), { flags: 'a' })
    : null;

  const routes = {
    '/file': serveFile,
    '/hello': (req, res) => send(res, 200, 'text/html', HELLO),
    '/loop': serveLoop,
    '/big': (req, res) => send(res, 200, 'text/plain', BIG),
    '/db': serveDb,
    '/cache': serveCache,
    '/json': (req, res) => send(res, 200, 'application/json',
      JSON.stringify({ message: 'Hello, World!' })),
    '/plaintext': (req, res) => send(res, 200, 'text/plain', 'Hello, World!'),
  };

  function send(res, status, type, body, extra) {
    const length = Buffer.byteLength(body);
    res.dbstandBytes = length;
    const headers = {
      'Content-Type': type,
      'Content-Length': length,
      Server: SERVER,
      ...extra,
    };
    res.writeHead(status, headers);
    res.end(body);
  }

  function fail(res, err) {
    console.error(`node-http: ${err && err.stack ? err.stack : err}`);
    if (!res.headersSent) send(res, 500, 'text/plain', 'internal error\n');
    else res.destroy();
  }

  // The file is read from disk on every request, as a web server's static handler does.
  function serveFile(req, res) {
    fs.readFile(filePath, (err, data) => {
      if (err) {
        if (err.code === 'ENOENT') send(res, 404, 'text/plain', 'not found\n');
        else fail(res, err);
        return;
      }
      send(res, 200, 'text/html', data);
    });
  }

  // 5,462 separate writes of 'Hello, World' (corked, so they leave in a few packets).
  function serveLoop(req, res) {
    res.dbstandBytes = HELLO.length * LOOP_PIECES;
    res.writeHead(200, {
      'Content-Type': 'text/html',
      'Content-Length': HELLO.length * LOOP_PIECES,
      Server: SERVER,
    });
    res.cork();
    for (let i = 0; i < LOOP_PIECES; i++) res.write(HELLO);
    res.uncork();
    res.end();
  }

  function renderWorld(title, row, count) {
    return `<!DOCTYPE html><html><head><title>${title}</title></head><body>` +
      `<p>world id=${row.id} randomnumber=${row.randomnumber}</p>` +
      `<p>count=${count}</p></body></html>\n`;
  }

  async function serveDb(req, res) {
    try {
      const { row, count } = await db.query();
      send(res, 200, 'text/html', renderWorld('db', row, count));
    } catch (err) {
      fail(res, err);
    }
  }

  // /cache asks the primary for the shared copy; the worker the primary names fills
  // it from the database, every other request while it is fresh gets it as it is.
  let tickets = 0;
  const pending = new Map();
  process.on('message', (msg) => {
    if (msg && msg.dbstand === 'cache') {
      const done = pending.get(msg.ticket);
      if (done) {
        pending.delete(msg.ticket);
        done(msg);
      }
    }
  });

  function askPrimary() {
    return new Promise((resolve) => {
      const ticket = ++tickets;
      pending.set(ticket, resolve);
      process.send({ dbstand: 'cache-get', ticket });
    });
  }

  async function serveCache(req, res) {
    try {
      let answer = await askPrimary();
      if (answer.fill) {
        let body = null;
        const expires = Date.now() + CACHE_SECONDS * 1000;
        try {
          const { row, count } = await db.query();
          body = renderWorld('cache', row, count);
        } finally {
          process.send({ dbstand: 'cache-put', body, expires });
        }
        answer = { body, expires };
      }
      send(res, 200, 'text/html', answer.body, {
        Expires: new Date(answer.expires).toUTCString(),
        'Cache-Control': `max-age=${CACHE_SECONDS}`,
      });
    } catch (err) {
      fail(res, err);
    }
  }

  const server = http.createServer((req, res) => {
    if (log) {
      const started = new Date();
      res.on('finish', () => {
        log.write(`${req.socket.remoteAddress || '-'} - - [${started.toISOString()}] ` +
          `"${req.method} ${req.url} HTTP/${req.httpVersion}" ${res.statusCode} ` +
          `${res.dbstandBytes || 0} "${req.headers['user-agent'] || '-'}"\n`);
      });
    }
    const q = req.url.indexOf('?');
    const handler = routes[q < 0 ? req.url : req.url.slice(0, q)];
    if (handler === undefined) {
      send(res, 404, 'text/plain', 'not found\n');
      return;
    }
    handler(req, res);
  });
  server.keepAliveTimeout = 15000;
  server.listen(parseInt(env('DBSTAND_PORT'), 10), env('DBSTAND_HOST', '127.0.0.1'));
}

// --- database: mysql2's pool, two SELECTs per page ------------------------------
function openDatabase() {
  let pool = null;
  let selectRow = '';
  let selectCount = '';

  function connect() {
    const kind = env('DBSTAND_DB_KIND');
    if (kind !== 'mysql') throw new Error(`DBSTAND_DB_KIND must be mysql, not '${kind}'`);
    const prefix = env('DBSTAND_PREFIX', 'dbstand_');
    if (!/^[A-Za-z0-9_]+$/.test(prefix)) throw new Error('DBSTAND_PREFIX is not a plain identifier');
    const passwordFile = env('DBSTAND_DB_PASSWORD_FILE');
    const password = passwordFile ? fs.readFileSync(passwordFile, 'utf8').replace(/\r?\n$/, '') : '';
    pool = mysql.createPool({
      host: env('DBSTAND_DB_HOST', '127.0.0.1'),
      port: parseInt(env('DBSTAND_DB_PORT', '3306'), 10),
      user: env('DBSTAND_DB_USER'),
      password,
      database: env('DBSTAND_DB_NAME'),
      connectionLimit: 8,
      waitForConnections: true,
    });
    selectRow = `SELECT id, randomnumber FROM ${prefix}world WHERE id = ?`;
    selectCount = `SELECT COUNT(*) AS count FROM ${prefix}world`;
  }

  return {
    async query() {
      if (pool === null) connect();
      const id = 1 + Math.floor(Math.random() * 10000);
      const conn = await pool.getConnection();
      try {
        const [rows] = await conn.execute(selectRow, [id]);
        if (rows.length !== 1) throw new Error(`no world row with id ${id}`);
        const [counted] = await conn.execute(selectCount);
        return { row: rows[0], count: Number(counted[0].count) };
      } finally {
        conn.release();
      }
    },
  };
}
