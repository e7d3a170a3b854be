# strata_module(NAME SOURCES a.cc b.cc DEPS strata_common ...)
# One static library per module, named strata_<NAME>, with src/ as its include root.
function(strata_module name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS" ${ARGN})
  add_library(strata_${name} STATIC ${A_SOURCES})
  target_include_directories(strata_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(strata_${name} PUBLIC ${A_DEPS})
endfunction()

# strata_test(NAME SOURCES a_test.cc ... DEPS strata_x ... [LABELS l])
# A gtest executable registered with CTest as one test. Tests run from the build directory
# with STRATA_SOURCE_DIR pointing at the repository (for testdata/ and examples/).
function(strata_test name)
  cmake_parse_arguments(A "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  if(STRATA_FUZZ)
    return()
  endif()
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE ${A_DEPS} GTest::gmock GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${A_TIMEOUT}
    ENVIRONMENT "STRATA_SOURCE_DIR=${PROJECT_SOURCE_DIR};STRATA_BINARY_DIR=${PROJECT_BINARY_DIR}")
  if(A_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${A_LABELS}")
  endif()
endfunction()
