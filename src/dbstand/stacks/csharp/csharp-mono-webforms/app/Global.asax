<%@ Application Language="C#" %>
<script runat="server">
// The /big block is built once, when the application starts.
void Application_Start(object sender, EventArgs e)
{
    Dbstand.WebForms.BigBlock.Build();
}
</script>
