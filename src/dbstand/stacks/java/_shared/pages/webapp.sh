# Sourced by jetty/build.sh and tomcat/build.sh (it sits with the classes every Java
# stack lists under `shared`, so a change here rebuilds them): lays out the exploded
# web application both containers start from, so the two builds differ only in what
# they compile.
# Usage: lay_out_webapp OUT [JSP_PAGES], run in the folder whose webapp/ is laid out;
# JSP_PAGES (java/_shared/jsp for the JSP stacks) is copied under WEB-INF/jsp.
lay_out_webapp() {
    mkdir -p "$1/WEB-INF/classes" "$1/WEB-INF/lib"
    cp -R webapp/. "$1/"
    if [ -n "${2:-}" ]; then
        mkdir -p "$1/WEB-INF/jsp"
        cp -R "$2/." "$1/WEB-INF/jsp/"
    fi
}
