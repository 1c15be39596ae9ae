package dbstand.webtech;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The two webtech paths that are not pages: /big is a binary block held in memory (a
 * JSP writes characters through a JspWriter, so the block is a servlet) and /file is an
 * alias to the static file. Every other path is a JSP page (WEB-INF/jsp).
 */
public final class Webtech {
    private Webtech() {
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
     * default servlet serves from the static folder mounted into the web application.
     */
    public static class File extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp)
                throws IOException, ServletException {
            req.getRequestDispatcher("/file.html").forward(req, resp);
        }
    }
}
