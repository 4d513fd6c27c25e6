// ---- wrapper.py: cpp_fused_ones_where_0 ----
#include "/tmp/long5/.asv/inductor-cache/vm-amd-epyc-8d7c4d/torch-2.7.0+cu126-13417947/avx2/default/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const float* in_ptr0,
                       const float* in_ptr1,
                       float* out_ptr2,
                       float* out_ptr3)
{
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1048576L); x0+=static_cast<int64_t>(8L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0) && x0 < static_cast<int64_t>(1048576L)))
                {
                    auto tmp0 = at::vec::Vectorized<float>::loadu(out_ptr2 + static_cast<int64_t>(x0), static_cast<int64_t>(8));
                    auto tmp1 = at::vec::Vectorized<float>::loadu(out_ptr3 + static_cast<int64_t>(x0), static_cast<int64_t>(8));
                    auto tmp2 = static_cast<bool>(true);
                    auto tmp3 = at::vec::VecMask<float,1>::from(tmp2);
                    auto tmp4 = decltype(tmp0)::blendv(tmp1, tmp0, tmp3.template cast<float,1>());
                    auto tmp5 = decltype(tmp1)::blendv(tmp0, tmp1, tmp3.template cast<float,1>());
                    tmp5.store(out_ptr2 + static_cast<int64_t>(x0));
                    tmp4.store(out_ptr3 + static_cast<int64_t>(x0));
                }
            }
        }
    }
}
