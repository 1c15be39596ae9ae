package dbstand.webtech;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import javax.servlet.ServletContext;
import javax.servlet.ServletContextEvent;
import javax.servlet.ServletContextListener;
import org.mariadb.jdbc.MariaDbPoolDataSource;

/**
 * Opens the MariaDB driver's pool from the DBSTAND_DB_* environment when the
 * application starts (the pages find it in the application scope) and closes it
 * when it stops. The password is read from its file here, so it sits in no
 * configuration file and on no command line. The size comes from the context
 * parameter dbstand.pool.size (the start script sets it to the thread count).
 */
public final class JettyPool implements ServletContextListener {
    /** Where the pool is in the application scope (the pages and servlets look it up). */
    public static final String ATTRIBUTE = "dbstand.world.pool";

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
        context.setAttribute(ATTRIBUTE, pool);
    }

    @Override
    public void contextDestroyed(ServletContextEvent event) {
        if (pool != null) {
            pool.close();
        }
    }
}
