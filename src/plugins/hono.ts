// The Hono plugin (`x402-vault/hono`) arrives with the seller-integration issue.
export {}
