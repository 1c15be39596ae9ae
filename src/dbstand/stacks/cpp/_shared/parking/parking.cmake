# Shared build of the C++ parking stacks: parking_stack(NAME sources...) builds the
# executable NAME from the stack's own sources (its Repo) and the common service.
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()

set(PARKING_COMMON ${CMAKE_CURRENT_LIST_DIR})
find_package(Threads REQUIRED)
find_path(MARIADB_INCLUDE mysql.h PATH_SUFFIXES mariadb mysql REQUIRED)
find_path(PQ_INCLUDE libpq-fe.h PATH_SUFFIXES postgresql REQUIRED)
find_path(SOCI_INCLUDE soci/soci.h REQUIRED)
find_path(BEAST_INCLUDE boost/beast.hpp REQUIRED)
foreach(lib soci_core soci_mysql soci_odbc soci_postgresql)
  find_library(LIB_${lib} ${lib} REQUIRED)
endforeach()

add_library(parking_common STATIC
  ${PARKING_COMMON}/money.cpp ${PARKING_COMMON}/pricing.cpp ${PARKING_COMMON}/json.cpp
  ${PARKING_COMMON}/log.cpp ${PARKING_COMMON}/db.cpp ${PARKING_COMMON}/rules.cpp
  ${PARKING_COMMON}/service.cpp ${PARKING_COMMON}/server.cpp)
target_include_directories(parking_common PUBLIC ${PARKING_COMMON} ${SOCI_INCLUDE}
  ${MARIADB_INCLUDE} ${PQ_INCLUDE} ${BEAST_INCLUDE})
target_compile_options(parking_common PUBLIC -Wall -Wextra)
target_link_libraries(parking_common PUBLIC ${LIB_soci_core} ${LIB_soci_mysql}
  ${LIB_soci_odbc} ${LIB_soci_postgresql} Threads::Threads ${CMAKE_DL_LIBS})

function(parking_stack name)
  add_executable(${name} ${PARKING_COMMON}/main.cpp ${ARGN})
  target_link_libraries(${name} PRIVATE parking_common)
  target_compile_definitions(${name} PRIVATE PARKING_STACK_NAME="${name}")
endfunction()
