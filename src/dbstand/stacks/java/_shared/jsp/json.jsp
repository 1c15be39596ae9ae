<%@ page contentType="application/json" session="false" trimDirectiveWhitespaces="true"
         import="com.fasterxml.jackson.databind.ObjectMapper, java.util.Map" %>
<%-- TechEmpower's JSON test: the object is serialized per request with Jackson. --%>
<%! private static final ObjectMapper MAPPER = new ObjectMapper(); %>
<%= MAPPER.writeValueAsString(Map.of("message", "Hello, World!")) %>
