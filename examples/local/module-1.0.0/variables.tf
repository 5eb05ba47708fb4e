variable "cluster_name" {
  type    = string
  default = "demo"
}

variable "admin_token" {
  type      = string
  sensitive = true
  default   = "base-admin-token"
}
