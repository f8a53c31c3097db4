/* <cuda_runtime_api.h> for .cu files parsed without a CUDA install: hexplore_cuda.h, which every .cu file gets
   first (-include), declares what hexplore reads of it. */
#pragma once
#include "hexplore_cuda.h"
