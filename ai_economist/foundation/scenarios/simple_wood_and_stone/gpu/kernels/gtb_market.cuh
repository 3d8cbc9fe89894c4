// Gather-trade-build's market (ContinuousDoubleAuction) as CUDA C device functions: the twins
// of gpu/gtb_market_numba_parts.py and of gpu/market_reference.py (cda_batched), function for
// function. Include after a generated state header that defines N_AGENTS, N_COMMODITIES,
// MAX_NUM_ORDERS, N_PRICES, N_GOODS, the MP_* / MI_* indices of market_params /
// market_iparams and MARKET_EMPTY (gpu/market_state.py). Goods are in the world's order: coin
// at GOODS_COIN, commodity c at GOODS_FIRST_COMMODITY + c. Per-agent functions touch only the
// agent's rows (the agents run in parallel); match_orders runs in one thread, commodity after
// commodity (trades on both books move the same coin; the order of float additions counts).
#ifndef AI_ECONOMIST_GTB_MARKET_CUH_
#define AI_ECONOMIST_GTB_MARKET_CUH_

#define MARKET_PRICE_DECAY 0.995  // continuous_double_auction.PRICE_DECAY (a double)
#define MARKET_ASK_NONE (1LL << 62)  // above every ask key
#define MARKET_ASKS 0
#define MARKET_BIDS 1
#define M_SLOT(c, a, k) (((c) * N_AGENTS + (a)) * MAX_NUM_ORDERS + (k))
#define M_CA(c, a) ((c) * N_AGENTS + (a))
#define M_BOOK(side, c, a, p) ((((side) * N_COMMODITIES + (c)) * N_AGENTS + (a)) * N_PRICES + (p))
#define M_HIST(c, a, p) (((c) * N_AGENTS + (a)) * N_PRICES + (p))
#define M_SLOTS (N_COMMODITIES * N_AGENTS * MAX_NUM_ORDERS)

// One env's slices of the market's arrays and of the host env's goods.
struct MarketEnv {
  int* bid_price;      // [C][A][K]
  int* bid_created;
  int* ask_price;
  int* ask_created;
  int* n_orders;       // [C][A]
  int* books;          // [2][C][A][P]
  double* history;     // [C][A][P]
  int* trade_count;    // [2][C][A]
  double* trade_value;
  int* n_trades;       // [C]
  int* bids;           // [A][C]
  int* asks;
  double* inv;         // [A][N_GOODS]
  double* esc;
  double* labor;       // [A]
};

#define MARKET_SLICES(env)                                                                      \
  {bid_price + (env) * M_SLOTS, bid_created + (env) * M_SLOTS, ask_price + (env) * M_SLOTS,     \
   ask_created + (env) * M_SLOTS, n_orders + (env) * N_COMMODITIES * N_AGENTS,                  \
   books + (env) * 2 * N_COMMODITIES * N_AGENTS * N_PRICES,                                     \
   price_history + (env) * N_COMMODITIES * N_AGENTS * N_PRICES,                                 \
   trade_count + (env) * 2 * N_COMMODITIES * N_AGENTS,                                          \
   trade_value + (env) * 2 * N_COMMODITIES * N_AGENTS, n_trades + (env) * N_COMMODITIES,        \
   market_bids + (env) * N_AGENTS * N_COMMODITIES, market_asks + (env) * N_AGENTS * N_COMMODITIES, \
   inventory + (env) * N_AGENTS * N_GOODS, escrow + (env) * N_AGENTS * N_GOODS,                 \
   labor + (env) * N_AGENTS}

// cda_batched.reset_envs for agent a's rows (the caller zeroes the clock and n_trades)
__device__ void market_reset(const MarketEnv& m, int a) {
  for (int c = 0; c < N_COMMODITIES; c++) {
    for (int k = 0; k < MAX_NUM_ORDERS; k++) {
      m.bid_price[M_SLOT(c, a, k)] = MARKET_EMPTY;
      m.ask_price[M_SLOT(c, a, k)] = MARKET_EMPTY;
      m.bid_created[M_SLOT(c, a, k)] = 0;
      m.ask_created[M_SLOT(c, a, k)] = 0;
    }
    m.n_orders[M_CA(c, a)] = 0;
    for (int p = 0; p < N_PRICES; p++) {
      m.books[M_BOOK(MARKET_ASKS, c, a, p)] = 0;
      m.books[M_BOOK(MARKET_BIDS, c, a, p)] = 0;
      m.history[M_HIST(c, a, p)] = 0.0;
    }
    for (int side = 0; side < 2; side++) {
      m.trade_count[side * N_COMMODITIES * N_AGENTS + M_CA(c, a)] = 0;
      m.trade_value[side * N_COMMODITIES * N_AGENTS + M_CA(c, a)] = 0.0;
    }
    m.bids[a * N_COMMODITIES + c] = 0;
    m.asks[a * N_COMMODITIES + c] = 0;
  }
}

// market_reference.split_actions of agent a's flat action
__device__ void split_actions(const MarketEnv& m, int a, int action, int offset) {
  for (int c = 0; c < N_COMMODITIES; c++) {
    const int start = offset + 2 * c * N_PRICES;
    int bid = 0, ask = 0;
    if (start <= action && action < start + N_PRICES) bid = action - start + 1;
    if (start + N_PRICES <= action && action < start + 2 * N_PRICES) {
      ask = action - start - N_PRICES + 1;
    }
    m.bids[a * N_COMMODITIES + c] = bid;
    m.asks[a * N_COMMODITIES + c] = ask;
  }
}

// state.history *= PRICE_DECAY (threads stride over the cells)
__device__ void decay_history(const MarketEnv& m, int tid, int nt) {
  for (int i = tid; i < N_COMMODITIES * N_AGENTS * N_PRICES; i += nt) {
    m.history[i] *= MARKET_PRICE_DECAY;
  }
}

// the first empty slot (0 where none is: cda_batched._free_slot)
__device__ int free_slot(const int* prices, int c, int a) {
  for (int k = 0; k < MAX_NUM_ORDERS; k++) {
    if (prices[M_SLOT(c, a, k)] == MARKET_EMPTY) return k;
  }
  return 0;
}

// cda_batched.place_orders for agent a: per commodity its bid (coin to escrow) then its ask
// (one unit to escrow), each while below max_num_orders
__device__ void place_orders(const MarketEnv& m, int a, int clock, const double* params,
                             const int* iparams) {
  const int k_max = iparams[MI_MAX_NUM_ORDERS];
  const double order_labor = params[MP_ORDER_LABOR];
  double* inv = m.inv + a * N_GOODS;
  double* esc = m.esc + a * N_GOODS;
  for (int c = 0; c < N_COMMODITIES; c++) {
    const int g = GOODS_FIRST_COMMODITY + c;
    int action = m.bids[a * N_COMMODITIES + c];
    int p = action - 1;
    if (action > 0 && m.n_orders[M_CA(c, a)] < k_max && inv[GOODS_COIN] >= p) {
      const int slot = free_slot(m.bid_price, c, a);
      m.bid_price[M_SLOT(c, a, slot)] = p;
      m.bid_created[M_SLOT(c, a, slot)] = clock;
      m.books[M_BOOK(MARKET_BIDS, c, a, p)] += 1;
      m.n_orders[M_CA(c, a)] += 1;
      inv[GOODS_COIN] -= p;
      esc[GOODS_COIN] += p;
      m.labor[a] += order_labor;
    }
    action = m.asks[a * N_COMMODITIES + c];
    p = action - 1;
    if (action > 0 && m.n_orders[M_CA(c, a)] < k_max && inv[g] > 0) {
      const int slot = free_slot(m.ask_price, c, a);
      m.ask_price[M_SLOT(c, a, slot)] = p;
      m.ask_created[M_SLOT(c, a, slot)] = clock;
      m.books[M_BOOK(MARKET_ASKS, c, a, p)] += 1;
      m.n_orders[M_CA(c, a)] += 1;
      inv[g] -= 1;
      esc[g] += 1;
      m.labor[a] += order_labor;
    }
  }
}

// agent b's best bid key (cda_batched_matching.bid_keys: price, then age, then the lower
// agent; -1 without bids) and its slot
__device__ long long best_bid(const MarketEnv& m, int c, int b, int clock, int duration,
                              int* slot) {
  long long best = -1;
  *slot = 0;
  for (int k = 0; k < MAX_NUM_ORDERS; k++) {
    const int p = m.bid_price[M_SLOT(c, b, k)];
    if (p == MARKET_EMPTY) continue;
    const long long life = clock - m.bid_created[M_SLOT(c, b, k)];
    const long long key = ((long long)p * (duration + 1) + life) * N_AGENTS + (N_AGENTS - 1 - b);
    if (key > best) {
      best = key;
      *slot = k;
    }
  }
  return best;
}

// agent s's best ask key (ask_keys: price, then older, then the lower agent; MARKET_ASK_NONE
// without asks) and its slot
__device__ long long best_ask(const MarketEnv& m, int c, int s, int clock, int duration,
                              int* slot) {
  long long best = MARKET_ASK_NONE;
  *slot = 0;
  for (int k = 0; k < MAX_NUM_ORDERS; k++) {
    const int p = m.ask_price[M_SLOT(c, s, k)];
    if (p == MARKET_EMPTY) continue;
    const long long life = clock - m.ask_created[M_SLOT(c, s, k)];
    const long long key = ((long long)p * (duration + 1) + (duration - life)) * N_AGENTS + s;
    if (key < best) {
      best = key;
      *slot = k;
    }
  }
  return best;
}

// the best ask key of the agents other than b, and whose it is (-1: none)
__device__ long long best_other_ask(const MarketEnv& m, int c, int b, int clock, int duration,
                                    int* owner) {
  long long best = MARKET_ASK_NONE;
  *owner = -1;
  for (int s = 0; s < N_AGENTS; s++) {
    if (s == b) continue;
    int slot;
    const long long key = best_ask(m, c, s, clock, duration, &slot);
    if (key < best) {
      best = key;
      *owner = s;
    }
  }
  return best;
}

// cda_batched_matching.execute_trades: one trade, at the earlier order's price
__device__ void execute_trades(const MarketEnv& m, int c, int buyer, int bid_slot, int seller,
                               int ask_slot, int clock) {
  const int g = GOODS_FIRST_COMMODITY + c;
  const int bid_p = m.bid_price[M_SLOT(c, buyer, bid_slot)];
  const int ask_p = m.ask_price[M_SLOT(c, seller, ask_slot)];
  const int bid_life = clock - m.bid_created[M_SLOT(c, buyer, bid_slot)];
  const int ask_life = clock - m.ask_created[M_SLOT(c, seller, ask_slot)];
  const int price = bid_life <= ask_life ? ask_p : bid_p;
  m.books[M_BOOK(MARKET_BIDS, c, buyer, bid_p)] -= 1;
  m.books[M_BOOK(MARKET_ASKS, c, seller, ask_p)] -= 1;
  m.n_orders[M_CA(c, seller)] -= 1;
  m.n_orders[M_CA(c, buyer)] -= 1;
  m.history[M_HIST(c, seller, price)] += 1;
  m.bid_price[M_SLOT(c, buyer, bid_slot)] = MARKET_EMPTY;
  m.ask_price[M_SLOT(c, seller, ask_slot)] = MARKET_EMPTY;
  m.esc[seller * N_GOODS + g] -= 1;
  m.inv[buyer * N_GOODS + g] += 1;
  m.esc[buyer * N_GOODS + GOODS_COIN] -= bid_p;
  m.inv[seller * N_GOODS + GOODS_COIN] += price;
  m.inv[buyer * N_GOODS + GOODS_COIN] += bid_p - price;
  const int sells = M_CA(c, seller), buys = N_COMMODITIES * N_AGENTS + M_CA(c, buyer);
  m.trade_count[sells] += 1;
  m.trade_value[sells] += price;
  m.trade_count[buys] += 1;
  m.trade_value[buys] += price;
  m.n_trades[c] += 1;
}

// cda_batched_matching.match_book of one commodity: each pass, every possible buyer whose
// best bid is below the other agents' best ask becomes impossible; the best bid of the rest
// trades with that ask; no trade: done
__device__ void match_book(const MarketEnv& m, int c, int clock, int duration) {
  const long long per_price = (long long)(duration + 1) * N_AGENTS;
  unsigned int possible = (N_AGENTS >= 32) ? 0xFFFFFFFFu : ((1u << N_AGENTS) - 1u);
  while (true) {
    int buyer = -1, seller = -1;
    long long top = -1;
    for (int b = 0; b < N_AGENTS; b++) {
      if (((possible >> b) & 1u) == 0) continue;
      int slot, owner;
      const long long key = best_bid(m, c, b, clock, duration, &slot);
      const long long other = best_other_ask(m, c, b, clock, duration, &owner);
      if (key < 0 || owner < 0 || key / per_price < other / per_price) {
        possible &= ~(1u << b);
      } else if (key > top) {
        buyer = b;
        top = key;
        seller = owner;
      }
    }
    if (buyer < 0) return;
    int bid_slot, ask_slot;
    best_bid(m, c, buyer, clock, duration, &bid_slot);
    best_ask(m, c, seller, clock, duration, &ask_slot);
    execute_trades(m, c, buyer, bid_slot, seller, ask_slot, clock);
  }
}

// whether the book got an order this step (place_orders' changed)
__device__ bool book_changed(const MarketEnv& m, int c, int clock) {
  for (int a = 0; a < N_AGENTS; a++) {
    for (int k = 0; k < MAX_NUM_ORDERS; k++) {
      const int i = M_SLOT(c, a, k);
      if (m.bid_price[i] != MARKET_EMPTY && m.bid_created[i] == clock) return true;
      if (m.ask_price[i] != MARKET_EMPTY && m.ask_created[i] == clock) return true;
    }
  }
  return false;
}

// cda_batched_matching.match_orders of one env (one thread), commodity by commodity
__device__ void match_orders(const MarketEnv& m, int clock, const int* iparams) {
  for (int c = 0; c < N_COMMODITIES; c++) {
    m.n_trades[c] = 0;
    if (book_changed(m, c, clock)) match_book(m, c, clock, iparams[MI_ORDER_DURATION]);
  }
}

// cda_batched.expire_orders for agent a: orders older than order_duration (after this step)
// leave, their coin and units return from escrow
__device__ void expire_orders(const MarketEnv& m, int a, int clock, const int* iparams) {
  const int age = clock + 1, duration = iparams[MI_ORDER_DURATION];
  double* inv = m.inv + a * N_GOODS;
  double* esc = m.esc + a * N_GOODS;
  for (int c = 0; c < N_COMMODITIES; c++) {
    const int g = GOODS_FIRST_COMMODITY + c;
    int refund = 0, units = 0;
    for (int k = 0; k < MAX_NUM_ORDERS; k++) {
      const int i = M_SLOT(c, a, k);
      if (m.bid_price[i] != MARKET_EMPTY && age - m.bid_created[i] > duration) {
        refund += m.bid_price[i];
      }
      if (m.ask_price[i] != MARKET_EMPTY && age - m.ask_created[i] > duration) units += 1;
    }
    esc[GOODS_COIN] -= refund;
    inv[GOODS_COIN] += refund;
    esc[g] -= units;
    inv[g] += units;
    for (int k = 0; k < MAX_NUM_ORDERS; k++) {
      const int i = M_SLOT(c, a, k);
      int p = m.bid_price[i];
      if (p != MARKET_EMPTY && age - m.bid_created[i] > duration) {
        m.books[M_BOOK(MARKET_BIDS, c, a, p)] -= 1;
        m.n_orders[M_CA(c, a)] -= 1;
        m.bid_price[i] = MARKET_EMPTY;
      }
      p = m.ask_price[i];
      if (p != MARKET_EMPTY && age - m.ask_created[i] > duration) {
        m.books[M_BOOK(MARKET_ASKS, c, a, p)] -= 1;
        m.n_orders[M_CA(c, a)] -= 1;
        m.ask_price[i] = MARKET_EMPTY;
      }
    }
  }
}

// ---------------------------------------------------------------- cda_batched_views
// the sales at price p summed over sellers, in seller order
__device__ double history_at(const MarketEnv& m, int c, int p) {
  double h = 0.0;
  for (int s = 0; s < N_AGENTS; s++) h = h + m.history[M_HIST(c, s, p)];
  return h;
}

// sum_p p h_p / max(0.001, sum_p h_p) (market_observations' rate)
__device__ double market_rate(const MarketEnv& m, int c) {
  double num = 0.0, den = 0.0;
  for (int p = 0; p < N_PRICES; p++) {
    const double h = history_at(m, c, p);
    num = num + p * h;
    den = den + h;
  }
  return num / fmax(0.001, den);
}

// open orders of one side, commodity and price over all agents
__device__ int full_book(const MarketEnv& m, int side, int c, int p) {
  int total = 0;
  for (int s = 0; s < N_AGENTS; s++) total += m.books[M_BOOK(side, c, s, p)];
  return total;
}

// agent a's market block at out[0..] (the dict env's sorted keys): available asks, available
// bids, market rate, my asks, my bids, price history
__device__ void market_observations(const MarketEnv& m, int a, float* out,
                                    const double* params) {
  int pos = 0;
  for (int side = 0; side < 2; side++) {
    for (int c = 0; c < N_COMMODITIES; c++) {
      for (int p = 0; p < N_PRICES; p++) {
        out[pos++] = (float)(full_book(m, side, c, p) - m.books[M_BOOK(side, c, a, p)]);
      }
    }
  }
  for (int c = 0; c < N_COMMODITIES; c++) out[pos++] = (float)market_rate(m, c);
  for (int side = 0; side < 2; side++) {
    for (int c = 0; c < N_COMMODITIES; c++) {
      for (int p = 0; p < N_PRICES; p++) out[pos++] = (float)m.books[M_BOOK(side, c, a, p)];
    }
  }
  for (int c = 0; c < N_COMMODITIES; c++) {
    for (int p = 0; p < N_PRICES; p++) {
      out[pos++] = (float)(history_at(m, c, p) * params[MP_INV_SCALE]);
    }
  }
}

// the planner's market block at out[0..]: full asks, full bids, market rate, price history
__device__ void planner_market_observations(const MarketEnv& m, float* out,
                                            const double* params) {
  int pos = 0;
  for (int side = 0; side < 2; side++) {
    for (int c = 0; c < N_COMMODITIES; c++) {
      for (int p = 0; p < N_PRICES; p++) out[pos++] = (float)full_book(m, side, c, p);
    }
  }
  for (int c = 0; c < N_COMMODITIES; c++) out[pos++] = (float)market_rate(m, c);
  for (int c = 0; c < N_COMMODITIES; c++) {
    for (int p = 0; p < N_PRICES; p++) {
      out[pos++] = (float)(history_at(m, c, p) * params[MP_INV_SCALE]);
    }
  }
}

// cda_batched_views.action_masks of agent a at mask[0..]: per commodity Buy (prices up to its
// coin) then Sell (all prices if it holds a unit), while below max_num_orders
__device__ void action_masks(const MarketEnv& m, int a, float* mask, const int* iparams) {
  const double* inv = m.inv + a * N_GOODS;
  for (int c = 0; c < N_COMMODITIES; c++) {
    const bool below = m.n_orders[M_CA(c, a)] < iparams[MI_MAX_NUM_ORDERS];
    const bool can_ask = below && inv[GOODS_FIRST_COMMODITY + c] > 0;
    float* buy = mask + 2 * c * N_PRICES;
    for (int p = 0; p < N_PRICES; p++) {
      buy[p] = (below && p <= inv[GOODS_COIN]) ? 1.0f : 0.0f;
      buy[N_PRICES + p] = can_ask ? 1.0f : 0.0f;
    }
  }
}

#endif  // AI_ECONOMIST_GTB_MARKET_CUH_
