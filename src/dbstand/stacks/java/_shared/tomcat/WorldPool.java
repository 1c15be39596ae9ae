package dbstand.webtech;

import jakarta.servlet.ServletContext;
import java.sql.SQLException;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * Where the Tomcat stacks' database pages find their pool: the DBCP pool Tomcat
 * publishes under JNDI (java:comp/env/jdbc/world). Jetty's stacks have a class of the
 * same name that reads the application scope, so the shared pages (Webtech,
 * world.jspf) are written once.
 */
public final class WorldPool {
    private WorldPool() {
    }

    /** The pool, or an SQLException saying why there is none (no jdbc/world resource). */
    public static DataSource lookup(ServletContext context) throws SQLException {
        try {
            return (DataSource) new InitialContext().lookup("java:comp/env/jdbc/world");
        } catch (NamingException exc) {
            throw new SQLException("no database configured (jdbc/world): " + exc, exc);
        }
    }
}
