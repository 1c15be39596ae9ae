<%@ page contentType="text/html;charset=UTF-8" session="false" trimDirectiveWhitespaces="true" %>
<%@ include file="world.jspf" %>
<% long[] w = queryWorld(); %>
<!DOCTYPE html><html><head><title>db</title></head><body><p>world id=<%= w[0] %> randomnumber=<%= w[1] %></p><p>count=<%= w[2] %></p></body></html>
