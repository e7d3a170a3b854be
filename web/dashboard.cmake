# The dashboard embedded in the strata binary: web/*.{html,js,css} plus uPlot, vendored from npm
# (the version locked in web/package-lock.json) into the build directory, turned into one
# generated .cc of byte arrays that src/server/dashboard_files.cc serves. Nothing is fetched at
# run time. When npm is missing or cannot install, the dashboard is embedded without uPlot and
# its charts show their latest values as text (the build says so).
#
# Usage: include(${PROJECT_SOURCE_DIR}/web/dashboard.cmake) then, after the library exists,
# strata_embed_dashboard(strata_server).

find_program(STRATA_NPM_EXECUTABLE npm)

function(strata_embed_dashboard target)
  set(web_dir ${PROJECT_SOURCE_DIR}/web)
  set(out ${PROJECT_BINARY_DIR}/generated/dashboard_assets.cc)
  file(GLOB files CONFIGURE_DEPENDS ${web_dir}/*.html ${web_dir}/*.js ${web_dir}/*.css)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DWEB_DIR=${web_dir} -DVENDOR_DIR=${PROJECT_BINARY_DIR}/web-vendor
      -DNPM=${STRATA_NPM_EXECUTABLE} -DOUTPUT=${out} -P ${web_dir}/embed_dashboard.cmake
    DEPENDS ${files} ${web_dir}/package.json ${web_dir}/package-lock.json
      ${web_dir}/embed_dashboard.cmake
    COMMENT "Embedding the dashboard (web/ and uPlot from npm)"
    VERBATIM)
  add_custom_target(strata_dashboard_assets DEPENDS ${out})
  # The generated file may be added to a target of another directory.
  get_target_property(target_dir ${target} SOURCE_DIR)
  set_source_files_properties(${out} DIRECTORY ${target_dir} PROPERTIES GENERATED TRUE)
  target_sources(${target} PRIVATE ${out})
  add_dependencies(${target} strata_dashboard_assets)
endfunction()
