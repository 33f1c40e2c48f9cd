package order

// ProductKey names product's lock, for tests that hold it from outside a
// shop.
var ProductKey = productKey
