<%@ Page Language="C#" ContentType="text/html" AutoEventWireup="false" EnableViewState="false" EnableSessionState="false" %>
<script runat="server">
// 5,462 writes of 12 bytes: 65,544 bytes, written one piece at a time.
protected override void Render(HtmlTextWriter writer)
{
    for (int i = 0; i < 5462; i++)
        Response.Write("Hello, World");
}
</script>
