# tk_add_kernels: compile a tk kernel ahead of time into a C++ target.
#
#   tk_add_kernels(app
#     SOURCES kernels/softmax.tk
#     KERNEL softmax_kernel
#     SIGNATURE "*fp32:16, *fp32:16, i32, i32, i32, i32"
#     [NAME softmax]                           # the generated struct (default: KERNEL)
#     [CONSTANTS BLOCK=1024 ...]               # constexprs shared by every config
#     [CONFIGS "BLOCK_SIZE=1024,num_warps=4" "BLOCK_SIZE=2048,num_warps=8"]
#     [KEY n_cols ...] [RESET_TO_ZERO ptr ...] [RESTORE_VALUE ptr ...]
#     [ARCH sm_90] [NAMESPACE tk_aot])
#
# At build time tkc --aot writes <build>/tk_kernels/<NAME>.{h,cpp} (re-run
# when the .tk file or tkc changes); the .cpp is added to `app`, the directory
# to its include path, and `app` links libtk. In the program:
#
#   #include "softmax.h"
#   tk_aot::softmax::launch([&](const tk::Config &) { return tk::Grid(rows); }, stream,
#                           out, in, n, n, rows, n);
#
# Call it once per kernel (several configs of one kernel in one call). The
# tkc used is TK_TKC_EXECUTABLE: tk::tkc from the installed package, the tkc
# target inside tk's own build.
function(tk_add_kernels target)
  cmake_parse_arguments(ARG "" "KERNEL;SIGNATURE;NAME;ARCH;NAMESPACE"
                        "SOURCES;CONSTANTS;CONFIGS;KEY;RESET_TO_ZERO;RESTORE_VALUE" ${ARGN})
  if(NOT ARG_SOURCES OR NOT ARG_KERNEL)
    message(FATAL_ERROR "tk_add_kernels(${target}): SOURCES and KERNEL are required")
  endif()
  list(LENGTH ARG_SOURCES count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "tk_add_kernels(${target}): one .tk file per call (got ${count})")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${ARG_KERNEL})
  endif()
  if(TARGET tk::tkc)
    set(tkc tk::tkc)
  elseif(TK_TKC_EXECUTABLE)
    set(tkc ${TK_TKC_EXECUTABLE})
  elseif(TARGET tkc)
    set(tkc tkc)
  else()
    message(FATAL_ERROR "tk_add_kernels: no tkc (find_package(tk) provides tk::tkc)")
  endif()
  get_filename_component(source ${ARG_SOURCES} ABSOLUTE)
  set(outdir ${CMAKE_CURRENT_BINARY_DIR}/tk_kernels)
  set(out ${outdir}/${ARG_NAME})
  set(args --aot ${source} --kernel ${ARG_KERNEL} -o ${out} --name ${ARG_NAME})
  if(ARG_SIGNATURE)
    list(APPEND args --signature "${ARG_SIGNATURE}")
  endif()
  foreach(c IN LISTS ARG_CONSTANTS)
    list(APPEND args -D ${c})
  endforeach()
  foreach(c IN LISTS ARG_CONFIGS)
    list(APPEND args --config "${c}")
  endforeach()
  foreach(k IN LISTS ARG_KEY)
    list(APPEND args --key ${k})
  endforeach()
  foreach(k IN LISTS ARG_RESET_TO_ZERO)
    list(APPEND args --reset-to-zero ${k})
  endforeach()
  foreach(k IN LISTS ARG_RESTORE_VALUE)
    list(APPEND args --restore-value ${k})
  endforeach()
  if(ARG_ARCH)
    list(APPEND args --arch ${ARG_ARCH})
  endif()
  if(ARG_NAMESPACE)
    list(APPEND args --namespace ${ARG_NAMESPACE})
  endif()
  add_custom_command(
    OUTPUT ${out}.h ${out}.cpp
    COMMAND ${tkc} ${args}
    DEPENDS ${source} ${tkc}
    COMMENT "tkc --aot ${ARG_KERNEL} (${ARG_SOURCES})"
    VERBATIM)
  target_sources(${target} PRIVATE ${out}.cpp ${out}.h)
  target_include_directories(${target} PRIVATE ${outdir})
  if(TARGET tk::tk)
    target_link_libraries(${target} PRIVATE tk::tk)
  else()
    target_link_libraries(${target} PRIVATE tk)
  endif()
endfunction()
