#!/bin/sh
# Build the Web Forms application into DBSTAND_BUILD_DIR/app: the pages as they are
# (System.Web compiles them at run time with mcs), the support library and the
# HttpListener host compiled into app/bin, where the ASP.NET domain finds them.
set -eu
stack_dir=${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}
build_dir=${DBSTAND_BUILD_DIR:?DBSTAND_BUILD_DIR is not set}
app=$build_dir/app
mkdir -p "$app/bin"
cp "$stack_dir"/app/*.aspx "$stack_dir/app/Global.asax" "$stack_dir/app/web.config" "$app/"
mcs -nologo -optimize+ -target:library -out:"$app/bin/Dbstand.WebForms.dll" \
    -r:System.Data.dll "$stack_dir/src/Support.cs"
mcs -nologo -optimize+ -target:exe -out:"$app/bin/DbstandHost.exe" \
    -r:System.Web.dll "$stack_dir/src/Host.cs"
echo "built $app"
