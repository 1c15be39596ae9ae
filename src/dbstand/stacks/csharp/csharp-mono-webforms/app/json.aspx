<%@ Page Language="C#" ContentType="application/json" AutoEventWireup="false" EnableViewState="false" EnableSessionState="false" %>
<script runat="server">
// TechEmpower's rule: a new object serialized by a JSON serializer on every request.
protected override void Render(HtmlTextWriter writer)
{
    var message = new System.Collections.Generic.Dictionary<string, string>();
    message["message"] = "Hello, World!";
    Response.Write(new System.Web.Script.Serialization.JavaScriptSerializer().Serialize(message));
}
</script>
