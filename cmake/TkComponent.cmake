# tk_component(NAME SOURCES a.cpp b.cpp DEPENDS tk_lang ... [LLVM_COMPONENTS nvptx ...])
#
# Declares one stage of the compiler as an OBJECT library; libtk links them
# all. Each stage lists the stages it depends on, so a dependency that runs
# backwards along the pipeline is a CMake error, not a habit.
set(TK_COMPONENTS "" CACHE INTERNAL "")

function(tk_component name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LLVM_COMPONENTS" ${ARGN})
  add_library(${name} OBJECT ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPENDS} ${TK_FMT})
  if(ARG_LLVM_COMPONENTS AND TK_WITH_LLVM)
    target_include_directories(${name} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
    target_compile_definitions(${name} PRIVATE ${LLVM_DEFINITIONS} TK_WITH_LLVM=1)
    llvm_map_components_to_libnames(llvm_libs ${ARG_LLVM_COMPONENTS})
    target_link_libraries(${name} PUBLIC ${llvm_libs})
  endif()
  set(TK_COMPONENTS ${TK_COMPONENTS} ${name} CACHE INTERNAL "")
endfunction()
