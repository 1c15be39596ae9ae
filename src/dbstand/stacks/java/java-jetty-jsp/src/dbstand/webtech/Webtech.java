package dbstand.webtech;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import javax.servlet.ServletContext;
import javax.servlet.ServletContextEvent;
import javax.servlet.ServletContextListener;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.mariadb.jdbc.MariaDbPoolDataSource;

/**
 * What the JSP pages (WEB-INF/jsp) do not do themselves: the connection pool, which
 * Jetty does not provide, and the two paths that are not pages: /big is a binary block
 * held in memory (a JSP writes characters through a JspWriter) and /file is an alias
 * to the static file.
 */
public final class Webtech {
    static final String POOL_ATTRIBUTE = "dbstand.world.pool";

    private Webtech() {
    }

    /**
     * Opens the MariaDB driver's pool from the DBSTAND_DB_* environment when the
     * application starts (the pages find it in the application scope) and closes it
     * when it stops. The password is read from its file here, so it sits in no
     * configuration file and on no command line. The size comes from the context
     * parameter dbstand.pool.size (the start script sets it to the thread count).
     */
    public static class Pool implements ServletContextListener {
        private MariaDbPoolDataSource pool;

        @Override
        public void contextInitialized(ServletContextEvent event) {
            if (!"mysql".equals(System.getenv("DBSTAND_DB_KIND"))) {
                return;
            }
            ServletContext context = event.getServletContext();
            int size = Integer.parseInt(context.getInitParameter("dbstand.pool.size"));
            try {
                String password = Files.readString(Path.of(System.getenv("DBSTAND_DB_PASSWORD_FILE")))
                        .replaceAll("[\\r\\n]+$", "");
                pool = new MariaDbPoolDataSource("jdbc:mariadb://" + System.getenv("DBSTAND_DB_HOST") + ":"
                        + System.getenv("DBSTAND_DB_PORT") + "/" + System.getenv("DBSTAND_DB_NAME"));
                pool.setUser(System.getenv("DBSTAND_DB_USER"));
                pool.setPassword(password);
                pool.setMaxPoolSize(size);
                pool.setMinPoolSize(size);
                pool.initialize();
            } catch (IOException | SQLException exc) {
                throw new IllegalStateException("cannot open the MariaDB pool: " + exc, exc);
            }
            context.setAttribute(POOL_ATTRIBUTE, pool);
        }

        @Override
        public void contextDestroyed(ServletContextEvent event) {
            if (pool != null) {
                pool.close();
            }
        }
    }

    /** /big: a 64 KiB block built once when the servlet starts, sent whole. */
    public static class Big extends HttpServlet {
        private byte[] block;

        @Override
        public void init() {
            block = "0123456789abcdef".repeat(4096).getBytes(StandardCharsets.US_ASCII);
        }

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            resp.setContentLength(block.length);
            resp.getOutputStream().write(block);
        }
    }

    /**
     * /file: an alias. The request is forwarded to /file.html, which the container's
     * default servlet serves from the static folder, a part of the context's resources.
     */
    public static class File extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp)
                throws IOException, ServletException {
            req.getRequestDispatcher("/file.html").forward(req, resp);
        }
    }
}
