package dbstand.webtech;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import javax.servlet.ServletContext;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import javax.sql.DataSource;

/**
 * dbstand's webtech database and JSON pages as plain servlets, one small class per
 * path, mapped in WEB-INF/web.xml the way a servlet programmer without a framework
 * maps them; the paths without a database are in Pages. Written once for javax.servlet
 * (Jetty 9); the Tomcat build rewrites the imports to jakarta.servlet. Where the pool
 * comes from is the one thing the containers do differently: WorldPool, in each
 * container's shared folder (java/_shared/jetty, java/_shared/tomcat).
 */
public final class Webtech {
    static final int WORLD_ROWS = 10000;
    static final long CACHE_TTL_MS = 15_000L;
    static final String HTML = "text/html;charset=UTF-8";

    private Webtech() {
    }

    /** The two SELECTs of the db page and its rendering, shared by /db and /cache. */
    static final class World {
        private final DataSource pool;
        private final String rowSql;
        private final String countSql;

        World(DataSource pool, String table) {
            this.pool = pool;
            this.rowSql = "SELECT id, randomnumber FROM " + table + " WHERE id = ?";
            this.countSql = "SELECT COUNT(*) FROM " + table;
        }

        /** The container's pool (WorldPool) and the table dbstand made. */
        static World lookup(ServletContext context) throws ServletException {
            String prefix = System.getenv().getOrDefault("DBSTAND_PREFIX", "dbstand_");
            if (!prefix.matches("[A-Za-z0-9_]*")) {
                throw new ServletException("DBSTAND_PREFIX must be letters, digits and _");
            }
            try {
                return new World(WorldPool.lookup(context), prefix + "world");
            } catch (SQLException exc) {
                throw new ServletException(exc.getMessage(), exc);
            }
        }

        String page() throws SQLException {
            int id = ThreadLocalRandom.current().nextInt(1, WORLD_ROWS + 1);
            try (Connection conn = pool.getConnection()) {
                int rowId;
                int number;
                try (PreparedStatement row = conn.prepareStatement(rowSql)) {
                    row.setInt(1, id);
                    try (ResultSet rs = row.executeQuery()) {
                        if (!rs.next()) {
                            throw new SQLException("no world row with id " + id);
                        }
                        rowId = rs.getInt(1);
                        number = rs.getInt(2);
                    }
                }
                long count;
                try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(countSql)) {
                    rs.next();
                    count = rs.getLong(1);
                }
                return "<!DOCTYPE html><html><head><title>db</title></head><body><p>world id="
                        + rowId + " randomnumber=" + number + "</p><p>count=" + count
                        + "</p></body></html>\n";
            }
        }
    }

    /** A servlet of the world table: its pool found once, when the container starts it. */
    abstract static class WorldServlet extends HttpServlet {
        private World world;

        @Override
        public void init() throws ServletException {
            world = World.lookup(getServletContext());
        }

        /** The db page; a failed query is the container's error page (HTTP 500). */
        String worldPage() throws ServletException {
            try {
                return world.page();
            } catch (SQLException exc) {
                throw new ServletException(exc);
            }
        }
    }

    /** /db: two queries per request through the container's pool. */
    public static class Db extends WorldServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp)
                throws IOException, ServletException {
            String body = worldPage();
            resp.setContentType(HTML);
            resp.getWriter().write(body);
        }
    }

    /**
     * /cache: the db page kept in memory for 15 s, so a fresh answer costs no query.
     * One lock guards the entry: requests that arrive while it is refreshed wait for the
     * new page instead of all querying the database at once.
     */
    public static class Cache extends WorldServlet {
        private final Object lock = new Object();
        private String body;
        private long freshUntil;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp)
                throws IOException, ServletException {
            long now = System.currentTimeMillis();
            String page;
            synchronized (lock) {
                if (body == null || now >= freshUntil) {
                    body = worldPage();
                    freshUntil = now + CACHE_TTL_MS;
                }
                page = body;
            }
            resp.setContentType(HTML);
            resp.setHeader("Cache-Control", "max-age=15");
            resp.setDateHeader("Expires", now + CACHE_TTL_MS);
            resp.getWriter().write(page);
        }
    }

    /** /json: TechEmpower's JSON test, serialized per request with Jackson. */
    public static class Json extends HttpServlet {
        private static final ObjectMapper MAPPER = new ObjectMapper();

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            byte[] body = MAPPER.writeValueAsBytes(Map.of("message", "Hello, World!"));
            resp.setContentType("application/json");
            resp.setContentLength(body.length);
            resp.getOutputStream().write(body);
        }
    }
}
