package dbstand.webtech;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * The webtech paths every Java stack answers the same way, without the database:
 * written once against the javax servlet API (Jetty 9); the Tomcat stacks' build
 * (java/_shared/tomcat/build.sh) compiles this file with javax.servlet renamed to
 * jakarta.servlet, the one difference between the two APIs here. Mapped in each
 * stack's WEB-INF/web.xml as dbstand.webtech.Pages$Hello and so on.
 */
public final class Pages {
    static final String HELLO = "Hello, World";
    /** 5,462 x 12 bytes = 65,544 bytes, just past 64 KiB. */
    static final int LOOP_COUNT = 5462;
    static final String HTML = "text/html;charset=UTF-8";

    private Pages() {
    }

    /** /hello: the floor of the container's per-request cost. */
    public static class Hello extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType(HTML);
            resp.getWriter().write(HELLO);
        }
    }

    /** /loop: the greeting written piece by piece; the test is the cost of many small writes. */
    public static class Loop extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType(HTML);
            PrintWriter out = resp.getWriter();
            for (int i = 0; i < LOOP_COUNT; i++) {
                out.write(HELLO);
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

    /** /plaintext: TechEmpower's plaintext test. */
    public static class Plaintext extends HttpServlet {
        private static final byte[] BODY = "Hello, World!".getBytes(StandardCharsets.US_ASCII);

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            resp.setContentLength(BODY.length);
            resp.getOutputStream().write(BODY);
        }
    }
}
