<%@ page contentType="text/html;charset=UTF-8" session="false" trimDirectiveWhitespaces="true" %>
<%-- The greeting is template text inside the loop: 5,462 writes to the JspWriter. --%>
<% for (int i = 0; i < 5462; i++) { %>Hello, World<% } %>
