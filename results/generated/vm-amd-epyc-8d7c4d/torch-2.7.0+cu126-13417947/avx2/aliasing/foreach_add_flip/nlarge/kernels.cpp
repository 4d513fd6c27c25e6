// ---- wrapper.py: cpp_fused__foreach_add_0 ----
#include "/tmp/long5/.asv/inductor-cache/vm-amd-epyc-8d7c4d/torch-2.7.0+cu126-13417947/avx2/default/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const float* in_ptr0,
                       float* out_ptr0)
{
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1048576L); x0+=static_cast<int64_t>(1L))
        {
            {
                {
                    auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
                    auto tmp1 = in_ptr0[static_cast<int64_t>(1048575L + ((-1L)*x0))];
                    auto tmp2 = decltype(tmp0)(tmp0 + tmp1);
                    out_ptr0[static_cast<int64_t>(x0)] = tmp2;
                }
            }
        }
    }
}
