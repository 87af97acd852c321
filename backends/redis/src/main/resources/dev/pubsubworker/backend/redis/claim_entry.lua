-- claim of one record, shared by claim.lua and claim_all.lua. Returns {1, fence, leaseExpiry}
-- (Won), {2, leaseExpiry, fingerprint} (HeldByOther), {3, 0, fingerprint} (AlreadyDone) or {4}
-- (an unreadable record: nothing written).
-- Redis work: on a key without a record one SET NX ... GET, which creates it (value and expiry in
-- one command). On a key with a record that SET writes nothing and returns the value; then
-- PEXPIRETIME (or, for a hash an earlier version wrote, HMGET), and on Won one SET that replaces
-- the record, value and expiry together.
local function claim_entry(key, now, lease, ttl, token, fingerprint, has_fingerprint)
  local leaseExpiry = now + lease
  local expiresAt = leaseExpiry + ttl
  local expiresText = int(expiresAt)
  if not has_fingerprint then
    fingerprint = false
  end
  local got = redis.pcall('SET', key, encode('CLAIMED', '1', ttl, token, fingerprint), 'NX',
    'PXAT', expiresText, 'GET')
  if got == false then
    return {1, 1, leaseExpiry}
  end
  local r = read_from(key, got)
  if r == false then
    return {4}
  end
  local fenceText = '1'
  local fence = 1
  if r then
    local state = r[1]
    if state == 'CLAIMED' and r[5] == token and now < r[4] then
      -- The caller's own claim, retried after a lost response: same fence, lease renewed.
      fenceText = r[2]
      fence = tonumber(r[2])
    elseif state == 'CLAIMED' and now < r[3] then
      return {2, r[3], r[6]}
    elseif state == 'DONE' and now < r[4] then
      return {3, 0, r[6]}
    else
      -- A lapsed lease or suppression window: reclaim over the old record, raising its fence.
      fence = next_fence(r[2])
      fenceText = int(fence)
    end
  end
  redis.call('SET', key, encode('CLAIMED', fenceText, ttl, token, fingerprint), 'PXAT',
    expiresText)
  return {1, fence, leaseExpiry}
end
