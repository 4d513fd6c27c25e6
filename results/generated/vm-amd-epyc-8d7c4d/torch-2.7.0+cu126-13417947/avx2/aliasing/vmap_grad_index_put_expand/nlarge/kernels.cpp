// ---- wrapper.py: cpp_fused_add_gather_index_add_lift_fresh_mul_select_backward_stack_sum_zeros_0 ----
#include "/tmp/long5/.asv/inductor-cache/vm-amd-epyc-8d7c4d/torch-2.7.0+cu126-13417947/avx2/default/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const float* in_ptr0,
                       const float* in_ptr1,
                       float* out_ptr0,
                       float* out_ptr1,
                       float* out_ptr2,
                       float* out_ptr3,
                       float* out_ptr4,
                       float* out_ptr5,
                       float* out_ptr6)
{
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(4L); x0+=static_cast<int64_t>(8L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0L) && x0 < static_cast<int64_t>(4L)))
                {
                    auto tmp0 = static_cast<float>(0.0);
                    auto tmp1 = at::vec::Vectorized<float>(tmp0);
                    tmp1.store(out_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(4L));
                }
            }
        }
    }
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(262144L); x0+=static_cast<int64_t>(1L))
        {
            {
                {
                    auto tmp0 = in_ptr0[static_cast<int64_t>(4L*x0)];
                    out_ptr1[static_cast<int64_t>(4L*x0)] = tmp0;
                }
            }
        }
    }
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(262144L); x0+=static_cast<int64_t>(1L))
        {
            {
                {
                    auto tmp0 = in_ptr0[static_cast<int64_t>(1L + 4L*x0)];
                    out_ptr2[static_cast<int64_t>(4L*x0)] = tmp0;
                }
            }
        }
    }
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(262144L); x0+=static_cast<int64_t>(1L))
        {
            {
                {
                    auto tmp0 = in_ptr0[static_cast<int64_t>(2L + 4L*x0)];
                    out_ptr3[static_cast<int64_t>(4L*x0)] = tmp0;
                }
            }
        }
    }
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(262144L); x0+=static_cast<int64_t>(1L))
        {
            {
                {
                    auto tmp0 = in_ptr0[static_cast<int64_t>(3L + 4L*x0)];
                    out_ptr4[static_cast<int64_t>(4L*x0)] = tmp0;
                }
            }
        }
    }
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(262144L); x0+=static_cast<int64_t>(1L))
        {
            {
                {
                    auto tmp0 = static_cast<int64_t>(0);
                    auto tmp1 = static_cast<int64_t>(1);
                    auto tmp2 = tmp0 < tmp1;
                    auto tmp3 = static_cast<int64_t>(2);
                    auto tmp4 = tmp2 ? tmp0 : tmp3;
                    auto tmp5 = in_ptr1[static_cast<int64_t>(tmp4 + 4L*x0)];
                    auto tmp6 = static_cast<float>(1.0);
                    auto tmp7 = static_cast<float>(-1.0);
                    auto tmp8 = tmp2 ? tmp6 : tmp7;
                    auto tmp9 = decltype(tmp5)(tmp5 * tmp8);
                    auto tmp10 = tmp1 < tmp1;
                    auto tmp11 = tmp10 ? tmp0 : tmp3;
                    auto tmp12 = in_ptr1[static_cast<int64_t>(tmp11 + 4L*x0)];
                    auto tmp13 = tmp10 ? tmp6 : tmp7;
                    auto tmp14 = decltype(tmp12)(tmp12 * tmp13);
                    auto tmp15 = decltype(tmp9)(tmp9 + tmp14);
                    out_ptr5[static_cast<int64_t>(x0)] = tmp15;
                }
            }
        }
    }
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(262144L); x0+=static_cast<int64_t>(1L))
        {
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(2L); x1+=static_cast<int64_t>(8L))
            {
                {
                    if(C10_LIKELY(x1 >= static_cast<int64_t>(0L) && x1 < static_cast<int64_t>(1)))
                    {
                        for (int64_t x1_tail = static_cast<int64_t>(0L);x1_tail < static_cast<int64_t>(2L); x1_tail++)
                        {
                            auto tmp0 = x1_tail;
                            auto tmp1 = c10::convert<int64_t>(tmp0);
                            auto tmp2 = static_cast<int64_t>(1);
                            auto tmp3 = tmp1 < tmp2;
                            auto tmp4 = static_cast<int64_t>(0);
                            auto tmp5 = static_cast<int64_t>(2);
                            auto tmp6 = tmp3 ? tmp4 : tmp5;
                            auto tmp7 = static_cast<float>(1.0);
                            auto tmp8 = static_cast<float>(-1.0);
                            auto tmp9 = tmp3 ? tmp7 : tmp8;
                            auto tmp10 = decltype(tmp7)(tmp7 * tmp9);
                            out_ptr0[static_cast<int64_t>(tmp6)] += tmp10;
                        }
                    }
                }
            }
        }
    }
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(262144L); x0+=static_cast<int64_t>(1L))
        {
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(4L); x1+=static_cast<int64_t>(8L))
            {
                {
                    if(C10_LIKELY(x1 >= static_cast<int64_t>(0L) && x1 < static_cast<int64_t>(1)))
                    {
                        for (int64_t x1_tail = static_cast<int64_t>(0L);x1_tail < static_cast<int64_t>(4L); x1_tail++)
                        {
                            auto tmp4 = out_ptr0[static_cast<int64_t>(3L)];
                            auto tmp9 = out_ptr0[static_cast<int64_t>(2L)];
                            auto tmp14 = out_ptr0[static_cast<int64_t>(1L)];
                            auto tmp19 = out_ptr0[static_cast<int64_t>(0L)];
                            auto tmp0 = x1_tail;
                            auto tmp1 = c10::convert<int32_t>(tmp0);
                            auto tmp2 = static_cast<int32_t>(3);
                            auto tmp3 = tmp1 == tmp2;
                            auto tmp5 = static_cast<float>(0.0);
                            auto tmp6 = tmp3 ? tmp4 : tmp5;
                            auto tmp7 = static_cast<int32_t>(2);
                            auto tmp8 = tmp1 == tmp7;
                            auto tmp10 = tmp8 ? tmp9 : tmp5;
                            auto tmp11 = decltype(tmp6)(tmp6 + tmp10);
                            auto tmp12 = static_cast<int32_t>(1);
                            auto tmp13 = tmp1 == tmp12;
                            auto tmp15 = tmp13 ? tmp14 : tmp5;
                            auto tmp16 = decltype(tmp11)(tmp11 + tmp15);
                            auto tmp17 = static_cast<int32_t>(0);
                            auto tmp18 = tmp1 == tmp17;
                            auto tmp20 = tmp18 ? tmp19 : tmp5;
                            auto tmp21 = decltype(tmp16)(tmp16 + tmp20);
                            out_ptr6[static_cast<int64_t>(x1_tail + 4L*x0)] = tmp21;
                        }
                    }
                }
            }
        }
    }
}
