<%@ Page Language="C#" ContentType="text/html" AutoEventWireup="false" EnableViewState="false" EnableSessionState="false" %>
<script runat="server">
// The db page kept 15 s in System.Web's Cache. While the copy is fresh it is sent
// as it is, with the Expires of that copy, and no query reaches the database.
// (Mono's OutputCache would do the storing, but its cached answers lose the
// Expires and Cache-Control headers, so the page keeps its copy itself.)
const string Key = "dbstand.cache.page";
static readonly object FillGate = new object();

protected override void Render(HtmlTextWriter writer)
{
    var entry = Cache[Key] as Dbstand.WebForms.CachedPage;
    if (entry == null || !entry.Fresh)
    {
        lock (FillGate)
        {
            entry = Cache[Key] as Dbstand.WebForms.CachedPage;
            if (entry == null || !entry.Fresh)
            {
                Dbstand.WebForms.WorldRow row = Dbstand.WebForms.World.Query();
                var ci = System.Globalization.CultureInfo.InvariantCulture;
                var sb = new System.Text.StringBuilder(160);
                sb.Append("<!DOCTYPE html><html><head><title>cache</title></head><body><p>world id=");
                sb.Append(row.Id.ToString(ci));
                sb.Append(" randomnumber=");
                sb.Append(row.RandomNumber.ToString(ci));
                sb.Append("</p><p>count=");
                sb.Append(row.Count.ToString(ci));
                sb.Append("</p></body></html>\n");
                entry = new Dbstand.WebForms.CachedPage(sb.ToString(), DateTime.UtcNow.AddSeconds(15));
                Cache.Insert(Key, entry, null, entry.ExpiresUtc, System.Web.Caching.Cache.NoSlidingExpiration);
            }
        }
    }
    Response.Cache.SetCacheability(HttpCacheability.Public);
    Response.Cache.SetExpires(entry.ExpiresUtc);
    Response.Cache.SetMaxAge(TimeSpan.FromSeconds(15));
    Response.Write(entry.Body);
}
</script>
