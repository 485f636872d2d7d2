// The Express plugin (`x402-vault/express`) arrives with the seller-integration issue.
export {}
