<%@ Page Language="C#" ContentType="text/plain" AutoEventWireup="false" EnableViewState="false" EnableSessionState="false" %>
<script runat="server">
protected override void Render(HtmlTextWriter writer)
{
    Response.Write("Hello, World!");
}
</script>
