// ---- wrapper.py: cpp_fused_add_0 ----
#include "/tmp/long5/.asv/inductor-cache/vm-amd-epyc-8d7c4d/torch-2.7.0+cu126-13417947/avx2/default/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const float* in_ptr0,
                       float* out_ptr1)
{
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1048576L); x0+=static_cast<int64_t>(8L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0) && x0 < static_cast<int64_t>(1048576L)))
                {
                    auto tmp0 = at::vec::Vectorized<float>::loadu(out_ptr1 + static_cast<int64_t>(x0), static_cast<int64_t>(8));
                    auto tmp1 = tmp0 + tmp0;
                    tmp1.store(out_ptr1 + static_cast<int64_t>(x0));
                }
            }
        }
    }
}
