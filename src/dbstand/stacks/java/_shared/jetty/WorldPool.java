package dbstand.webtech;

import java.sql.SQLException;
import javax.servlet.ServletContext;
import javax.sql.DataSource;

/**
 * Where the Jetty stacks' database pages find their pool: in the application scope,
 * where JettyPool put it when the application started. Tomcat's stacks have a class
 * of the same name that asks JNDI, so the shared pages (Webtech, world.jspf) are
 * written once.
 */
public final class WorldPool {
    private WorldPool() {
    }

    /** The pool, or an SQLException saying why there is none (no MariaDB configured). */
    public static DataSource lookup(ServletContext context) throws SQLException {
        DataSource pool = (DataSource) context.getAttribute(JettyPool.ATTRIBUTE);
        if (pool == null) {
            throw new SQLException("no database configured (DBSTAND_DB_KIND is not mysql)");
        }
        return pool;
    }
}
