<%@ Page Language="C#" ContentType="text/plain" AutoEventWireup="false" EnableViewState="false" EnableSessionState="false" %>
<script runat="server">
// The block was built at application start (Global.asax); it is sent whole.
protected override void Render(HtmlTextWriter writer)
{
    byte[] block = Dbstand.WebForms.BigBlock.Bytes;
    Response.OutputStream.Write(block, 0, block.Length);
}
</script>
