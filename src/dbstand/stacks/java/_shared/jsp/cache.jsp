<%@ page contentType="text/html;charset=UTF-8" session="false" trimDirectiveWhitespaces="true" %>
<%@ include file="world.jspf" %>
<%-- The db page from rows kept in memory for 15 s: a fresh answer costs no query.
     One lock guards the entry, so requests during a refresh wait for the new rows. --%>
<%!
    private final Object lock = new Object();
    private long[] cached;
    private long freshUntil;
%>
<%
    long now = System.currentTimeMillis();
    long[] w;
    synchronized (lock) {
        if (cached == null || now >= freshUntil) {
            cached = queryWorld();
            freshUntil = now + 15000L;
        }
        w = cached;
    }
    response.setHeader("Cache-Control", "max-age=15");
    response.setDateHeader("Expires", now + 15000L);
%>
<!DOCTYPE html><html><head><title>db</title></head><body><p>world id=<%= w[0] %> randomnumber=<%= w[1] %></p><p>count=<%= w[2] %></p></body></html>
