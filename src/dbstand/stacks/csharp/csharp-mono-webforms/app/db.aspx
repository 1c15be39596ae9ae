<%@ Page Language="C#" ContentType="text/html" AutoEventWireup="false" EnableViewState="false" EnableSessionState="false" %>
<script runat="server">
// Two SELECTs per request through System.Data.Odbc: a row by random id, then the count.
protected override void Render(HtmlTextWriter writer)
{
    Dbstand.WebForms.WorldRow row = Dbstand.WebForms.World.Query();
    Response.Write("<!DOCTYPE html><html><head><title>db</title></head><body><p>world id=");
    Response.Write(row.Id.ToString(System.Globalization.CultureInfo.InvariantCulture));
    Response.Write(" randomnumber=");
    Response.Write(row.RandomNumber.ToString(System.Globalization.CultureInfo.InvariantCulture));
    Response.Write("</p><p>count=");
    Response.Write(row.Count.ToString(System.Globalization.CultureInfo.InvariantCulture));
    Response.Write("</p></body></html>\n");
}
</script>
